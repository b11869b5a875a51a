import { DynamicModule, Global, Module } from '@nestjs/common';
import type { AppConfig } from './app-config';

/** Injection token for the validated AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');

@Global()
@Module({})
export class ConfigModule {
  /** The config is loaded (and validated) by main.ts before Nest starts, then provided here. */
  static forRoot(config: AppConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
