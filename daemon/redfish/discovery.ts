import { RedfishError } from './errors.ts';
import { serviceRootPath, toPath, type RedfishHttp, type RedfishResource } from './http.ts';
import { arr, linkOf, obj, str, type Json } from './json.ts';
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

  /**
   * The ComputerSystem this client drives: the one the address names, else the only one. Never a guess: on a BMC
   * serving several systems, an address without one is refused, so a command can never reach the wrong machine.
   */
  async systemUri(): Promise<string> {
    if (this.systemUriCache === undefined) {
      const systems = await members(this.http, requireLink(await this.root(), 'Systems', 'Systems'));
      const canonical = (uri: string) => toPath(uri).replace(/\/+$/, '').toLowerCase();
      let chosen: string | undefined;
      if (this.preferredSystemUri !== undefined) {
        const wanted = canonical(this.preferredSystemUri);
        chosen = systems.find((s) => canonical(s) === wanted);
        if (chosen === undefined) throw new RedfishError('REDFISH_NOT_FOUND', `BMC lists no ComputerSystem ${toPath(this.preferredSystemUri)}`);
      } else if (systems.length > 1) {
        throw new RedfishError('REDFISH_SYSTEM_AMBIGUOUS', `BMC serves ${systems.length} systems; the address must name one (…/redfish/v1/Systems/<id>)`);
      } else {
        chosen = systems[0];
        if (chosen === undefined) throw new RedfishError('REDFISH_NOT_FOUND', 'BMC lists no ComputerSystem');
      }
      this.systemUriCache = chosen;
    }
    return this.systemUriCache;
  }

  /**
   * Who made the BMC, lower-case, where behaviour differs by family: `ServiceRoot.Vendor` (Redfish 1.5+), else the
   * vendor key of the root's or the system's `Oem` section (`Ami`, `Hpe`, `Dell`, …). undefined when nothing says.
   */
  async family(): Promise<string | undefined> {
    const root = await this.root();
    const vendor = str(root.Vendor) ?? Object.keys(obj(root.Oem))[0] ?? Object.keys(obj((await this.system()).body.Oem))[0];
    return vendor?.toLowerCase();
  }

  /** The managers of our system (Links.ManagedBy) first, then any others the service lists. */
  async managers(): Promise<string[]> {
    return this.managerUris((await this.system()).body);
  }

  async system(): Promise<RedfishResource> {
    return this.http.get(await this.systemUri());
  }

  /** The managers responsible for our system first (Links.ManagedBy), then any others the service lists. */
  private async managerUris(system: Json): Promise<string[]> {
    const managedBy = arr(obj(system.Links).ManagedBy)
      .map((m) => linkOf(m))
      .filter((u): u is string => u !== undefined);
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
