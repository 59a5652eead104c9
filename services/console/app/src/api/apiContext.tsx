import { createContext, useContext, type ReactNode } from 'react';
import type { ApiClient } from './client.ts';
import type { SessionView } from './shapes.ts';

interface SignedIn {
  readonly client: ApiClient;
  readonly session: SessionView;
}

const SignedInContext = createContext<SignedIn | null>(null);

export function SignedInProvider({ value, children }: { value: SignedIn; children: ReactNode }) {
  return <SignedInContext.Provider value={value}>{children}</SignedInContext.Provider>;
}

/** The signed-in client and who it is; only pages behind sign-in use it. */
export function useSignedIn(): SignedIn {
  const value = useContext(SignedInContext);
  if (!value) throw new Error('useSignedIn outside of a signed-in console');
  return value;
}
