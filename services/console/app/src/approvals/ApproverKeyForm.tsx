import { useState, type FormEvent } from 'react';
import { importApproverKey, type ApproverKey } from './approverKey.ts';

/**
 * Loads the approver's Ed25519 private key into this page's WebCrypto (non-extractable). The PEM text is dropped from
 * the form as soon as it is imported; the key goes nowhere and is gone when the page is.
 */
export function ApproverKeyForm({ current, onKey }: { current: ApproverKey | null; onKey: (key: ApproverKey | null) => void }) {
  const [approverId, setApproverId] = useState('');
  const [pem, setPem] = useState('');
  const [error, setError] = useState<string | null>(null);

  if (current) {
    return (
      <p className="notice">
        Signing as approver <strong>{current.approverId}</strong> (key held in this page only).{' '}
        <button type="button" onClick={() => onKey(null)}>
          Forget key
        </button>
      </p>
    );
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const key = await importApproverKey(approverId.trim(), pem);
      setPem('');
      onKey(key);
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <form className="approver-key" aria-label="Approver key" onSubmit={(e) => void submit(e)}>
      <div className="field">
        <label htmlFor="approver-id">Approver id</label>
        <input id="approver-id" required value={approverId} onChange={(e) => setApproverId(e.target.value)} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor="approver-pem">Ed25519 private key (PKCS#8 PEM)</label>
        <textarea
          id="approver-pem"
          required
          rows={4}
          value={pem}
          onChange={(e) => setPem(e.target.value)}
          spellCheck={false}
          autoComplete="off"
          placeholder="-----BEGIN PRIVATE KEY-----"
        />
      </div>
      <button type="submit">Load key</button>
      {error && (
        <p role="alert" className="problem">
          {error}
        </p>
      )}
    </form>
  );
}
