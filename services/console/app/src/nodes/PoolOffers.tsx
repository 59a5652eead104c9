import { useState } from 'react';
import { useLocation } from 'wouter';
import { useSignedIn } from '../api/apiContext.tsx';
import type { PoolOffer } from '../api/shapes.ts';
import { useResource } from '../api/useResource.ts';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { TableHead } from '../components/TableHead.tsx';
import { subjectOf, useLiveReload } from '../live/useLiveReload.ts';
import { DeployFields, deployPayload, type DeployChoice } from './DeployFields.tsx';

const offerName = (o: PoolOffer) => `${o.hardwareProfile} at ${o.siteId}${o.poolId ? ` (pool ${o.poolId})` : ''}`;

/**
 * A tenant's way to a first node: free nodes are nobody's, so its node list never shows them. The offers say what it
 * may take (the API's own rule: ready, free, out of maintenance), by group; taking one deploys it and opens its page.
 */
export function PoolOffers() {
  const { client } = useSignedIn();
  const offers = useResource('pool-offers', (minSeq, signal) => client.poolOffers(minSeq, signal));
  useLiveReload(offers, subjectOf.anyNode);
  const [open, setOpen] = useState<PoolOffer | null>(null);
  const [, navigate] = useLocation();
  const items = offers.data?.items ?? [];
  return (
    <section aria-labelledby="pool-title">
      <h2 id="pool-title">Take a node from the pool</h2>
      <ProblemAlert error={offers.error} />
      {offers.data && items.length === 0 && <p>No free node is left to take.</p>}
      {items.length > 0 && (
        <div className="table-scroll">
          <table className="pool">
            <TableHead caption="Free nodes you may take" columns={['Site', 'Pool', 'Hardware profile', 'Free', 'Action']} />
            <tbody>
              {items.map((o) => (
                <tr key={offerName(o)} data-offer={offerName(o)}>
                  <td>{o.siteId}</td>
                  <td>{o.poolId ?? 'none'}</td>
                  <td>{o.hardwareProfile}</td>
                  <td>{o.available}</td>
                  <td>
                    <button type="button" onClick={() => setOpen(o)} aria-label={`Deploy a node of ${offerName(o)}`}>
                      Deploy one
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && <AllocateDialog offer={open} onClose={() => setOpen(null)} onTaken={(nodeId) => navigate(`/nodes/${nodeId}`)} />}
    </section>
  );
}

function AllocateDialog({ offer, onClose, onTaken }: { offer: PoolOffer; onClose: () => void; onTaken: (nodeId: string) => void }) {
  const { client } = useSignedIn();
  const [choice, setChoice] = useState<DeployChoice>({ profileId: 'deploy', role: 'host', sshKeys: '', inputs: {} });
  return (
    <ConfirmDialog
      title={`Deploy a node of ${offerName(offer)}`}
      confirmLabel="Deploy"
      onClose={onClose}
      onConfirm={async () => {
        const { nodeId: _picked, ...deploy } = deployPayload('', choice);
        const taken = await client.allocate({ siteId: offer.siteId, poolId: offer.poolId, hardwareProfile: offer.hardwareProfile, deploy });
        onTaken(taken.nodeId);
      }}
    >
      <p>A free node of this kind becomes yours: its ramdisk boots, the image is written to its disk and it boots the image.</p>
      <DeployFields profiles={[]} choice={choice} onChange={setChoice} />
    </ConfirmDialog>
  );
}
