// Sensors are written against the SDK, as a plugin's are: the definitions live in the public entry.
export { defineSensor, defaultSensorSettings } from '../../../plugins/sdk/defineSensor.ts';
export type { Sensor, SensorSettings } from '../../../plugins/sdk/defineSensor.ts';
