import { RedfishError } from './errors.ts';
import { serviceRootPath, toPath, type RedfishHttp, type RedfishResource } from './http.ts';
import { arr, linkOf, obj, type Json } from './json.ts';
import { members, optional, requireLink } from './links.ts';

/**
 * Finds resources by following `@odata.id` links from the service root, never by composing URIs from `Id`
 * (which is not always the last path segment, and whose case differs between vendors). Only link targets are
 * cached; documents are re-read because power, boot and media state change under us.
 */
export class Discovery {
  private rootBody: Json | undefined;
  private systemUriCache: string | undefined;
  private mediaUrisCache: string[] | undefined;

  constructor(
    private readonly http: RedfishHttp,
    private readonly preferredSystemUri?: string,
  ) {}

  async root(): Promise<Json> {
    this.rootBody ??= (await this.http.get(serviceRootPath)).body;
    return this.rootBody;
  }

  /** A top-level service (`UpdateService`, `Tasks`, `Managers`...) from the service root. */
  async service(name: string): Promise<RedfishResource> {
    return this.http.get(requireLink(await this.root(), name, name));
  }

  async systemUri(): Promise<string> {
    if (this.systemUriCache === undefined) {
      const systems = await members(this.http, requireLink(await this.root(), 'Systems', 'Systems'));
      const wanted = this.preferredSystemUri === undefined ? undefined : toPath(this.preferredSystemUri).toLowerCase();
      const chosen = wanted === undefined ? systems[0] : systems.find((s) => toPath(s).toLowerCase() === wanted);
      if (chosen === undefined) throw new RedfishError('REDFISH_NOT_FOUND', 'BMC lists no matching ComputerSystem');
      this.systemUriCache = chosen;
    }
    return this.systemUriCache;
  }

  async system(): Promise<RedfishResource> {
    return this.http.get(await this.systemUri());
  }

  /** The managers responsible for our system first (Links.ManagedBy), then any others the service lists. */
  private async managerUris(system: Json): Promise<string[]> {
    const managedBy = arr(obj(system.Links).ManagedBy).map((m) => linkOf(m)).filter((u): u is string => u !== undefined);
    const managersLink = linkOf(await this.root(), 'Managers');
    const listed = managersLink === undefined ? [] : await members(this.http, managersLink);
    return [...new Set([...managedBy, ...listed])];
  }

  /** Virtual media under the managers (the classic place) and under the system (ComputerSystem >= 1.13). */
  async virtualMediaUris(): Promise<string[]> {
    if (this.mediaUrisCache === undefined) {
      const system = (await this.system()).body;
      const collections: string[] = [];
      const onSystem = linkOf(system, 'VirtualMedia');
      if (onSystem !== undefined) collections.push(onSystem);
      for (const managerUri of await this.managerUris(system)) {
        const manager = await optional(() => this.http.get(managerUri));
        const link = manager ? linkOf(manager.body, 'VirtualMedia') : undefined;
        if (link !== undefined) collections.push(link);
      }
      const uris: string[] = [];
      for (const collection of collections) uris.push(...((await optional(() => members(this.http, collection))) ?? []));
      this.mediaUrisCache = [...new Set(uris)];
    }
    return this.mediaUrisCache;
  }
}
