import { touch, type TreeStore } from './treeStore.ts';

/** What a firmware package holds, as a BMC reads it from the package: the component it is for and its version. */
export interface FirmwareImage {
  /** `@odata.id` of the component in the tree's FirmwareInventory (or SoftwareInventory). */
  component: string;
  version: string;
}

/**
 * What flashing an image changes, which no static tree can show. DSP0268's SoftwareInventory says a component's
 * `Version` is the version it runs, so a flashed image sets its component's `Version`. Which component and version an
 * image carries is what the test's image server holds (`BmcSimulatorOptions.firmwareImages`); an image the simulator
 * knows no package for changes no version, as a package for another model or of the running version would not.
 */
export class FirmwareModel {
  readonly applied: string[] = [];

  constructor(
    private readonly store: TreeStore,
    private readonly images: Readonly<Record<string, FirmwareImage>>,
  ) {
    for (const [image, { component }] of Object.entries(images)) {
      if (!store.resolve(component)) throw new Error(`firmware image ${image} is for ${component}, which the tree does not have`);
    }
  }

  flash(image: string): void {
    this.applied.push(image);
    const found = this.images[image];
    const component = found ? this.store.resolve(found.component)?.doc : undefined;
    if (!found || !component) return;
    component.Version = found.version;
    touch(component);
  }
}
