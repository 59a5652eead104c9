/**
 * The API token of this browser tab. Session storage: it survives a reload, not the tab, and never leaves the page
 * except as the `Authorization` header of `/v1` calls.
 */
const key = 'bc-console-token';

export const storedToken = (): string | null => sessionStorage.getItem(key);
export const storeToken = (token: string): void => sessionStorage.setItem(key, token);
export const forgetToken = (): void => sessionStorage.removeItem(key);
