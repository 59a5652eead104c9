import { z } from 'zod';
import { defineEvent, type EventOf } from '../eventCatalog.ts';
import { PluginRegistration } from './registration.ts';

/** A plugin announced (a new version of) its steps, profiles, drivers and providers. */
export const PluginRegistered = defineEvent('PluginRegistered', PluginRegistration.extend({ registeredAt: z.string() }));
export const pluginEvents = [PluginRegistered] as const;
export type PluginEvent = EventOf<(typeof pluginEvents)[number]>;
