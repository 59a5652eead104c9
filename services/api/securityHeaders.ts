import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * What a page of this origin may load and do. The console is one Vite bundle served from `/assets/` with no inline
 * script or style (its `index.html` names a module script and a stylesheet; React sets styles through the DOM, which
 * the policy does not restrict), and talks only to this API. So: its own scripts, styles, fonts and images (plus
 * the `data:` favicon), its own API for `fetch` and the event stream, nothing framed and nobody framing it, no
 * plugins, no `<base>`. An injected inline script or a script from elsewhere does not run, which is what keeps the
 * token in `sessionStorage` out of reach of markup an attacker might get into a page.
 */
const contentSecurityPolicy = {
  'default-src': ["'self'"],
  'base-uri': ["'none'"],
  'connect-src': ["'self'"],
  'font-src': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
} as const;

/**
 * Security headers on every answer, API and console alike (`@fastify/helmet`: set in the first `onRequest` hook, on
 * the raw response, so they are on refusals, problems and the hijacked event stream too): the CSP above,
 * `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, `X-Frame-Options: DENY` for browsers without
 * `frame-ancestors`, and helmet's other defaults. No `upgrade-insecure-requests`: the API listens on plain HTTP
 * (loopback by default) and TLS, where there is any, is a proxy's.
 */
export async function installSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: { useDefaults: false, directives: contentSecurityPolicy },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
  });
}
