/** What a handler returns; the server turns it into HTTP. */
export interface SimResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Base registry message ids the simulator answers with (DSP0268 `Base.1.x`). */
export const BaseMessages = {
  ResourceNotFound: 'Base.1.8.ResourceNotFound',
  NoValidSession: 'Base.1.8.NoValidSession',
  MalformedJSON: 'Base.1.8.MalformedJSON',
  ActionParameterNotSupported: 'Base.1.8.ActionParameterNotSupported',
  ActionParameterMissing: 'Base.1.8.ActionParameterMissing',
  ActionNotSupported: 'Base.1.8.ActionNotSupported',
  PropertyValueNotInList: 'Base.1.8.PropertyValueNotInList',
  PropertyNotWritable: 'Base.1.8.PropertyNotWritable',
  PropertyUnknown: 'Base.1.8.PropertyUnknown',
  PropertyValueTypeError: 'Base.1.8.PropertyValueTypeError',
  PreconditionFailed: 'Base.1.8.PreconditionFailed',
  PreconditionRequired: 'Base.1.8.PreconditionRequired',
  OperationNotAllowed: 'Base.1.8.OperationNotAllowed',
  Success: 'Base.1.8.Success',
} as const;
export type BaseMessageId = (typeof BaseMessages)[keyof typeof BaseMessages];

/** The error envelope every Redfish service uses (DSP0266 §9.6 "Error responses"). */
export function redfishError(status: number, messageId: BaseMessageId, message: string): SimResponse {
  return {
    status,
    body: {
      error: {
        code: messageId,
        message,
        '@Message.ExtendedInfo': [{ MessageId: messageId, Message: message, Severity: 'Critical' }],
      },
    },
  };
}

export const notFound = (path: string): SimResponse => redfishError(404, BaseMessages.ResourceNotFound, `The requested resource ${path} was not found.`);

export const methodNotAllowed = (method: string, path: string): SimResponse =>
  redfishError(405, BaseMessages.ActionNotSupported, `${method} is not supported on ${path}.`);

export const badValue = (property: string, value: unknown): SimResponse =>
  redfishError(
    400,
    BaseMessages.PropertyValueNotInList,
    `The value ${JSON.stringify(value)} for the property ${property} is not in the list of acceptable values.`,
  );

export const notAllowedNow = (what: string): SimResponse => redfishError(409, BaseMessages.OperationNotAllowed, `${what} is not allowed in the current state.`);

export function success(status = 200): SimResponse {
  return {
    status,
    body: { '@Message.ExtendedInfo': [{ MessageId: BaseMessages.Success, Message: 'Successfully Completed Request' }] },
  };
}
