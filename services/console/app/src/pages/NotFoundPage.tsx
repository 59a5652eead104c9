import { Link } from 'wouter';

export function NotFoundPage() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        Nothing is here, or nothing your token may see. <Link href="/">Back to the fleet overview</Link>.
      </p>
    </section>
  );
}
