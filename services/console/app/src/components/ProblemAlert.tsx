import type { ApiError } from '../api/client.ts';

/** An API refusal as the API put it: its stable problem code, then its message (and which fields, if any). */
export function ProblemAlert({ error }: { error: ApiError | undefined }) {
  if (!error) return null;
  return (
    <div role="alert" className="problem">
      <strong className="problem-code">{error.code}</strong> {error.message}
      {error.issues && error.issues.length > 0 && (
        <ul>
          {error.issues.map((i) => (
            <li key={`${i.path}:${i.message}`}>
              <code>{i.path || '(body)'}</code>: {i.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
