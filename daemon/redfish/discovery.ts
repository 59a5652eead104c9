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
  private systemCount: number | undefined;
  private managerUrisCache: string[] | undefined;
  private mediaCollectionsCache: string[] | undefined;

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
      let chosen: string | undefined;
      if (this.preferredSystemUri !== undefined) {
        const wanted = this.preferredSystemUri;
        chosen = systems.find((s) => sameUri(s, wanted));
        if (chosen === undefined) throw new RedfishError('REDFISH_NOT_FOUND', `BMC lists no ComputerSystem ${toPath(this.preferredSystemUri)}`);
      } else if (systems.length > 1) {
        throw new RedfishError('REDFISH_SYSTEM_AMBIGUOUS', `BMC serves ${systems.length} systems; the address must name one (…/redfish/v1/Systems/<id>)`);
      } else {
        chosen = systems[0];
        if (chosen === undefined) throw new RedfishError('REDFISH_NOT_FOUND', 'BMC lists no ComputerSystem');
      }
      this.systemUriCache = chosen;
      this.systemCount = systems.length;
    }
    return this.systemUriCache;
  }

  /**
   * The managers of our system: those its `Links.ManagedBy` names, else those whose `Links.ManagerForServers` names it,
   * else (a BMC serving this one system and linking neither way) every manager the service lists. Never another
   * system's manager: virtual media mounted there boots another machine.
   */
  async managers(): Promise<string[]> {
    if (this.managerUrisCache === undefined) {
      const system = await this.system();
      const managedBy = arr(obj(system.body.Links).ManagedBy).flatMap((m) => linkOf(m) ?? []);
      const managersLink = linkOf(await this.root(), 'Managers');
      const listed = managedBy.length > 0 || managersLink === undefined ? [] : await members(this.http, managersLink);
      const ours = async (uri: string) => {
        const manager = await optional(() => this.http.get(uri));
        return arr(obj(manager?.body.Links).ManagerForServers).some((s) => sameUri(linkOf(s), system.uri));
      };
      const managing: string[] = [];
      for (const uri of listed) if (await ours(uri)) managing.push(uri);
      const chosen = managedBy.length > 0 ? managedBy : managing.length > 0 ? managing : this.systemCount === 1 ? listed : [];
      this.managerUrisCache = [...new Set(chosen)];
    }
    return this.managerUrisCache;
  }

  async system(): Promise<RedfishResource> {
    return this.http.get(await this.systemUri());
  }

  /**
   * Virtual media slots of our system: under the system itself (ComputerSystem >= 1.13), then under its own managers.
   * The collections are found once; their members are listed at every call, because some BMCs show slots only once
   * remote media is switched on (AMI MegaRAC).
   */
  async virtualMediaUris(): Promise<string[]> {
    if (this.mediaCollectionsCache === undefined) {
      const collections: string[] = [];
      const onSystem = linkOf((await this.system()).body, 'VirtualMedia');
      if (onSystem !== undefined) collections.push(onSystem);
      for (const managerUri of await this.managers()) {
        const manager = await optional(() => this.http.get(managerUri));
        const link = manager ? linkOf(manager.body, 'VirtualMedia') : undefined;
        if (link !== undefined) collections.push(link);
      }
      this.mediaCollectionsCache = collections;
    }
    const uris: string[] = [];
    for (const collection of this.mediaCollectionsCache) uris.push(...((await optional(() => members(this.http, collection))) ?? []));
    return [...new Set(uris)];
  }
}

/** Two links to one resource: BMCs differ in case and trailing slashes between a link and the resource's own URI. */
function sameUri(a: string | undefined, b: string): boolean {
  const canonical = (uri: string) => toPath(uri).replace(/\/+$/, '').toLowerCase();
  return a !== undefined && canonical(a) === canonical(b);
}
