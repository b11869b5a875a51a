import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '@switchboard/config';
import { CallTracing } from './call-tracing';
import { startTracing } from './tracer-provider';

/**
 * OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT). A module of its own for its place in the
 * shutdown: Nest closes the root module's providers first (MediaStreamService ends every live
 * call, and with it its spans), then imported modules like this one, whose CallTracing flushes the
 * spans and shuts the provider down. Without tracing configured no provider exists at all.
 */
@Module({})
export class TracingModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: TracingModule,
      providers: [{ provide: CallTracing, useFactory: () => new CallTracing(config.tracing === undefined ? undefined : startTracing(config.tracing)) }],
      exports: [CallTracing],
    };
  }
}
