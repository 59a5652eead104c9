import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';
import { PlatformError } from '../../schemas/platformError.ts';

/**
 * The web console's files from `root` (`dist/console`): hashed bundles under `/assets/` (cached for good), and
 * `index.html` for every other path outside `/v1/`, so the console's own routes (`/nodes/r1-n1`) load the app. A path
 * under `/v1/` that no API route matched stays a NOT_FOUND problem.
 */
export const consoleRoutes: FastifyPluginAsync<{ root: string }> = async (app, { root }) => {
  // The build writes .br and .gz beside each bundle (services/console/precompress.ts): sent to browsers that accept them.
  await app.register(fastifyStatic, { root, serve: false, preCompressed: true });
  const notFound = (path: string) => new PlatformError('NOT_FOUND', `no route GET ${path}`);

  app.get<{ Params: { '*': string } }>('/assets/*', { schema: { hide: true } }, async (req, reply) =>
    reply.sendFile(`assets/${req.params['*']}`, { maxAge: 31_536_000_000, immutable: true }),
  );

  app.get('/*', { schema: { hide: true } }, async (req, reply) => {
    const path = req.url.split('?')[0]!;
    if (path === '/v1' || path.startsWith('/v1/')) throw notFound(path);
    if (!existsSync(join(root, 'index.html')))
      throw new PlatformError('NOT_FOUND', 'the console is not built: run npm run build:console (npm start builds it)');
    // The page names hashed bundles: it must be revalidated so a new build is picked up.
    return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  });
};
