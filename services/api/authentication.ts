import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tokenCredential, type TokenCredential } from '../../projections/tokens/queries.ts';
import { actorOfToken, type Principal } from '../../schemas/auth/roles.ts';
import { parseToken, secretMatches } from '../auth/bearer.ts';
import { tokenAggregate } from '../auth/token/token.ts';
import type { AggregateRepository } from '../platform/commands/aggregateRepository.ts';
import { PlatformError } from '../../schemas/platformError.ts';
import { accessOf, isPublicRoute } from './accessPolicy.ts';
import { readerOf, type ApiContext } from './apiContext.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling; set on every authenticated `/v1/*` request (an anonymous admin when `BC_API_AUTH=off`). */
    principal: Principal | undefined;
    /** Why authentication failed, thrown once rate limiting has counted the request. */
    authFailure: PlatformError | undefined;
  }
}

/** Everyone is an admin when authentication is off (`BC_API_AUTH=off`: a trusted localhost setup). */
const anonymous: Principal = { tokenId: 'anonymous', role: 'admin', tenantId: null, actor: 'http:anonymous' };

/** Why a token that was valid once no longer is. */
export type TokenInvalidReason = 'revoked' | 'expired';

/** Asks again whether a principal's token still holds: long-lived requests (the event stream) end when it does not. */
export interface TokenCheck {
  whyInvalid(principal: Principal): Promise<TokenInvalidReason | null>;
}

const whyInvalid = (credential: TokenCredential): TokenInvalidReason | null => {
  if (credential.revoked) return 'revoked';
  if (credential.expiresAt !== null && Date.parse(credential.expiresAt) <= Date.now()) return 'expired';
  return null;
};

const unauthenticated = (message: string) => new PlatformError('UNAUTHENTICATED', message);

/**
 * Bearer tokens on every `/v1/*` route but the public ones. Three hooks, so that failed attempts count against the rate
 * limit too: `onRequest` finds the principal (or the failure), the rate limit (a route `onRequest` hook, after this one)
 * counts per token or per client address, and `preParsing` refuses: 401 UNAUTHENTICATED, then the role check
 * (403 FORBIDDEN, or 404 NOT_FOUND where a tenant must not learn that something exists).
 */
export function installAuthentication(app: FastifyInstance, ctx: ApiContext, repository: AggregateRepository): TokenCheck {
  app.decorateRequest('principal', undefined);
  app.decorateRequest('authFailure', undefined);
  const tokens = readerOf(ctx, 'tokens');

  // The read model answers almost always; a token created a moment ago may not be in it yet, and the read model may be
  // being rebuilt: the log decides then.
  const credentialOf = async (tokenId: string): Promise<TokenCredential | undefined> => {
    const fromReadModel = (() => {
      try {
        return tokens.query((db) => tokenCredential(db, tokenId));
      } catch (err) {
        if (err instanceof PlatformError && err.code === 'UNAVAILABLE') return undefined;
        throw err;
      }
    })();
    if (fromReadModel) return fromReadModel;
    const { state } = await repository.loadAccepting(tokenAggregate, tokenId, (token) => token.exists);
    return state.exists ? state : undefined;
  };

  const authenticate = async (req: FastifyRequest): Promise<Principal> => {
    const header = req.headers.authorization;
    if (!header) throw unauthenticated('missing Authorization: Bearer <token>');
    const parsed = /^Bearer ([^\s]+)$/i.exec(header.trim());
    const token = parsed ? parseToken(parsed[1]!) : undefined;
    // One message for every bad token: which part failed is no business of someone holding a bad token.
    const invalid = unauthenticated('the bearer token is invalid, revoked or expired');
    if (!token) throw invalid;
    const credential = await credentialOf(token.tokenId);
    if (!credential || !secretMatches(token.secret, credential.secretHash)) throw invalid;
    if (whyInvalid(credential)) throw invalid;
    return { tokenId: credential.tokenId, role: credential.role, tenantId: credential.tenantId, actor: actorOfToken(credential.tokenId) };
  };

  app.addHook('onRequest', async (req) => {
    if (isPublicRoute(req.url)) return;
    if (ctx.config.apiAuth === 'off') {
      req.principal = anonymous;
      return;
    }
    try {
      req.principal = await authenticate(req);
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
      req.authFailure = err;
    }
  });

  const check: TokenCheck = {
    async whyInvalid(principal) {
      if (principal === anonymous) return null;
      const credential = await credentialOf(principal.tokenId);
      return credential ? whyInvalid(credential) : 'revoked';
    },
  };

  app.addHook('preParsing', async (req, reply) => {
    if (isPublicRoute(req.url)) return;
    if (req.authFailure) {
      void reply.header('www-authenticate', 'Bearer');
      throw req.authFailure;
    }
    const principal = req.principal!;
    const access = accessOf(principal, req.method, req.routeOptions.url);
    if (access === 'hidden') throw new PlatformError('NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`);
    if (access === 'forbidden')
      throw new PlatformError('FORBIDDEN', `role ${principal.role} may not ${req.method} ${req.routeOptions.url ?? req.url.split('?')[0]}`);
  });
  return check;
}
