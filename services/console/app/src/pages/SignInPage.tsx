import { useEffect, useState, type FormEvent } from 'react';
import { ApiError } from '../api/client.ts';
import { forgetToken } from '../api/session.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';

/** Sign in with an API token (`bct_<id>_<secret>`); the API checks it and says which role it has. */
export function SignInPage({
  onSignIn,
  notice,
  resumeToken,
}: {
  onSignIn: (token: string) => Promise<void>;
  notice: string | null;
  resumeToken: string | null;
}) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(resumeToken !== null);

  const attempt = async (candidate: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await onSignIn(candidate);
    } catch (err) {
      forgetToken();
      setError(err instanceof ApiError ? err : new ApiError(0, 'INTERNAL', String(err)));
      setBusy(false);
    }
  };

  useEffect(() => {
    if (resumeToken) void attempt(resumeToken);
    // Only the token found in the tab at load is tried by itself.
  }, [resumeToken]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void attempt(token.trim());
  };

  return (
    <main className="sign-in">
      <h1>Better Compute</h1>
      <p>Sign in with an API token. It stays in this tab only and goes nowhere but this API.</p>
      {notice && (
        <p role="status" className="notice">
          {notice}
        </p>
      )}
      <form onSubmit={submit}>
        <label htmlFor="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          required
          value={token}
          onChange={(e) => setToken(e.target.value)}
          placeholder="bct_…"
        />
        <button type="submit" disabled={busy || token.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ProblemAlert error={error} />
    </main>
  );
}
