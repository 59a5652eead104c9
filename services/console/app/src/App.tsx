import { useCallback, useMemo, useState } from 'react';
import { SignedInProvider } from './api/apiContext.tsx';
import { ApiClient } from './api/client.ts';
import { forgetToken, storedToken, storeToken } from './api/session.ts';
import type { SessionView } from './api/shapes.ts';
import { ConsoleLayout } from './ConsoleLayout.tsx';
import { LiveEventsProvider } from './live/eventStream.tsx';
import { SignInPage } from './pages/SignInPage.tsx';

interface SignedIn {
  readonly token: string;
  readonly session: SessionView;
}

/**
 * Sign-in gate: with no token (or once the API answers 401: expired or revoked) the sign-in page; otherwise the console
 * for the token's role. A token left in the tab's session storage is checked again on load.
 */
export function App() {
  const [signedIn, setSignedIn] = useState<SignedIn | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [resumeToken, setResumeToken] = useState(storedToken);

  const signOut = useCallback((why: string | null) => {
    forgetToken();
    setResumeToken(null);
    setSignedIn(null);
    setNotice(why);
  }, []);

  const client = useMemo(
    () => (signedIn ? new ApiClient(signedIn.token, () => signOut('Your token is no longer valid (expired or revoked): sign in again.')) : null),
    [signedIn, signOut],
  );

  const signIn = useCallback(async (token: string) => {
    const session = await new ApiClient(token, () => undefined).session();
    storeToken(token);
    setNotice(null);
    setSignedIn({ token, session });
  }, []);

  if (!signedIn || !client) return <SignInPage onSignIn={signIn} notice={notice} resumeToken={resumeToken} />;
  return (
    <SignedInProvider value={{ client, session: signedIn.session }}>
      <LiveEventsProvider client={client}>
        <ConsoleLayout onSignOut={() => signOut(null)} />
      </LiveEventsProvider>
    </SignedInProvider>
  );
}
