import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { Subjects } from '../../schemas/subjects.ts';
import type { Projection } from '../../projections/runtime/projection.ts';
import type { ProjectorStatus } from './readModelProjector.ts';

/** What answers for one read model: a `Projector` of its own, or a read model of the shared `ProjectorGroup`. */
export interface ControlledReadModel {
  readonly projection: Projection;
  rebuild(): Promise<void>;
  status(): Promise<ProjectorStatus>;
}

/** Answers `bc.ctl.projector.<name>.rebuild` and `.status` for one read model; returns the subscriptions to close. */
export function serveProjectorControl(nc: NatsConnection, projector: ControlledReadModel): Subscription[] {
  const name = projector.projection.name;
  const rebuild = nc.subscribe(Subjects.projectorControl(name, 'rebuild'), {
    callback: (_err, msg) => {
      projector.rebuild().then(
        async () => msg.respond(JSON.stringify({ ok: true, status: await projector.status() })),
        (err: Error) => msg.respond(JSON.stringify({ ok: false, error: err.message })),
      );
    },
  });
  const status = nc.subscribe(Subjects.projectorControl(name, 'status'), {
    callback: (_err, msg) => void projector.status().then((s) => msg.respond(JSON.stringify(s))),
  });
  return [rebuild, status];
}
