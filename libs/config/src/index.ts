export { defaultPublicBaseUrl, loadAppConfig, ConfigValidationError, type AppConfig } from './app-config';
export { environmentSchema, type Environment } from './environment.schema';
export { DEFAULT_PORT, serverPortOf } from './server-port';
export { ConfigModule, APP_CONFIG } from './config.module';
export { parseKeyValueList, TRACES_SAMPLERS, type OtlpHttpProtocol, type TracesSamplerName, type TracingConfig } from './tracing-config';
export { MODEL_DEVICE_PROVIDERS, MODEL_PRECISION_CHOICES, parseModelDevices, parseModelPrecisions, type ModelDeviceProvider, type ModelPrecisionChoice, type ParsedModelSettings } from './model-devices';
