import { encodeUser, fmtCreds } from '@nats-io/jwt';
import { createUser } from '@nats-io/nkeys';
import type { BrokerMaterial } from '../../../services/trust/broker/brokerMaterial.ts';

/**
 * The fleet bench driver's credential on its own server: it sends commands as the control plane does, and it also
 * counts the JetStream API requests every process makes (`NatsTraffic` subscribes to `$JS.API.>`), which no product
 * role may read. So it is a user of the application account allowed everything, valid for a day, issued only here.
 */
export async function benchObserverCreds(material: BrokerMaterial): Promise<string> {
  const key = createUser();
  const jwt = await encodeUser(
    'fleet-bench-observer',
    key,
    material.appAccount.publicKey,
    { pub: { allow: ['>'] }, sub: { allow: ['>'] } },
    {
      signer: material.appSigningKey,
      exp: Math.floor(Date.now() / 1000) + 24 * 3600,
    },
  );
  return new TextDecoder().decode(fmtCreds(jwt, key));
}
