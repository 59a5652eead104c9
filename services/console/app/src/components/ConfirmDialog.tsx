import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { ApiError } from '../api/client.ts';
import { ProblemAlert } from './ProblemAlert.tsx';

/**
 * A modal confirmation (the browser's own `<dialog>`: focus stays inside, Escape cancels). `onConfirm` runs the
 * action; a refusal stays in the dialog with the API's problem code and message, so the user can correct and retry.
 */
export function ConfirmDialog({
  title,
  confirmLabel,
  danger = false,
  onConfirm,
  onClose,
  children,
}: {
  title: string;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();

  useEffect(() => {
    const dialog = ref.current!;
    // Focus goes back where it was (the button that opened the dialog) when the dialog closes, as WAI-ARIA's dialog asks.
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    return () => {
      dialog.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm();
      onClose();
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, 'INTERNAL', (err as Error).message));
      setBusy(false);
    }
  };

  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        if (!busy) onClose();
      }}
    >
      <form onSubmit={(e) => void submit(e)}>
        <h2 id={titleId}>{title}</h2>
        {children}
        <ProblemAlert error={error} />
        <div className="dialog-buttons">
          <button type="button" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className={danger ? 'danger' : 'primary'} disabled={busy}>
            {busy ? 'Working…' : confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
