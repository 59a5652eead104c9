import { isCorruptDatabase } from '../../schemas/corruptDatabase.ts';
import { ErrorCodes, type ErrorCode } from '../../schemas/errorCodes.ts';
import type { Problem } from '../../schemas/api.ts';
import { asPlatformError, PlatformError, type Issue } from '../../schemas/platformError.ts';

/** Fastify's own request errors, by its stable `code`, mapped onto ours. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_FAILED',
  FST_ERR_VALIDATION: 'VALIDATION_FAILED',
};

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  message?: string;
  validation?: Array<{ instancePath?: string; message?: string; params?: { issue?: { path?: PropertyKey[]; message?: string } } }>;
}

/** The one mapping from anything thrown to an error code: platform errors keep theirs, fastify's are translated. */
export function toPlatformError(err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  const e = err as FastifyLikeError;
  if (e && typeof e === 'object' && Array.isArray(e.validation)) {
    const issues: Issue[] = e.validation.map((v) => ({
      path: v.params?.issue?.path?.map(String).join('.') || v.instancePath?.replace(/^\//, '').replaceAll('/', '.') || '(root)',
      message: v.params?.issue?.message ?? v.message ?? 'invalid',
    }));
    return new PlatformError('VALIDATION_FAILED', 'request does not match the schema', { issues, cause: err });
  }
  const mapped = e?.code ? fastifyCodes[e.code] : undefined;
  if (mapped) return new PlatformError(mapped, e.message ?? ErrorCodes[mapped].title, { cause: err });
  if (e?.statusCode === 429) return new PlatformError('RATE_LIMITED', 'too many requests', { cause: err });
  // A read model file that broke under a query: its projector rebuilds it, so this read model is briefly unavailable.
  if (isCorruptDatabase(err)) return new PlatformError('UNAVAILABLE', 'a read model is being rebuilt; try again shortly', { cause: err });
  return asPlatformError(err);
}

/** RFC 9457 body for an error; internal errors say nothing about their cause. */
export function problemOf(err: PlatformError, instance?: string): Problem {
  const { status, title } = ErrorCodes[err.code];
  return {
    type: `https://better-compute.dev/problems/${err.code.toLowerCase().replaceAll('_', '-')}`,
    title,
    status,
    code: err.code,
    detail: err.code === 'INTERNAL' ? 'internal error' : err.message,
    ...(err.issues ? { issues: err.issues } : {}),
    ...(instance ? { instance } : {}),
  };
}
