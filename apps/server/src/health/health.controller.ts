import { Controller, Get, HttpCode, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { InferenceService, type InferenceState } from '../inference/inference.service';
import { ServerDrain } from '../server-drain/server-drain';
import { DatabaseReadiness } from './database-readiness.service';

const PROVIDER: SchemaObject = { type: 'string', enum: ['cpu', 'cuda', 'webgpu'] };
const REQUESTED: SchemaObject = { type: 'string', enum: ['auto', 'cpu', 'cuda', 'webgpu'] };
const PRECISION: SchemaObject = { type: 'string', enum: ['fp32', 'fp16', 'int8'] };

/** Local inference in the readiness answer: informational, it never makes the server unready. */
const INFERENCE_SCHEMA: SchemaObject = {
  type: 'object',
  description:
    'Local inference (onnxruntime): `not_started` until a pulled model or the first call needs it; `running` with the execution provider ' +
    'requested (INFERENCE_DEVICE), the one chosen, the providers passed over and why, and where each loaded model runs; `failed` when an ' +
    'explicitly requested GPU provider is unavailable.',
  properties: {
    state: { type: 'string', enum: ['not_started', 'starting', 'running', 'failed'] },
    requested: REQUESTED,
    device: PROVIDER,
    fallbacks: {
      type: 'array',
      items: { type: 'object', properties: { provider: PROVIDER, reason: { type: 'string' } }, required: ['provider', 'reason'] },
    },
    models: { type: 'object', additionalProperties: PROVIDER, description: 'Loaded models by name: the provider each runs on.' },
    modelFallbacks: {
      type: 'array',
      description: 'Models pinned (INFERENCE_MODEL_DEVICES) to a provider that is unavailable, and where they run instead.',
      items: {
        type: 'object',
        properties: { model: { type: 'string' }, pinned: PROVIDER, device: PROVIDER, reason: { type: 'string' } },
        required: ['model', 'pinned', 'device', 'reason'],
      },
    },
    precisions: {
      type: 'object',
      additionalProperties: PRECISION,
      description: 'Loaded models by name: the numeric variant each runs (INFERENCE_MODEL_PRECISION; fp32 unless asked and available).',
    },
    precisionFallbacks: {
      type: 'array',
      description: 'Models whose requested variant could not be used (the provider does not run it as intended, or its file is not pulled), and why; they run fp32.',
      items: {
        type: 'object',
        properties: { model: { type: 'string' }, requested: PRECISION, precision: { type: 'string', enum: ['fp32'] }, reason: { type: 'string' } },
        required: ['model', 'requested', 'precision', 'reason'],
      },
    },
    error: { type: 'string', description: 'Why the runtime could not start (state `failed`).' },
  },
  required: ['state'],
};

@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly database: DatabaseReadiness,
    private readonly drain: ServerDrain,
    private readonly inference: InferenceService,
  ) {}

  /** Liveness: the process is up and serving HTTP. Never touches dependencies. */
  @Get()
  @HttpCode(200)
  @ApiOkResponse({ description: 'The process is up.', schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] } })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Readiness: the database answers, so calls can be recorded, and this process is not draining (a
   * load balancer then sends new calls to the other instances; liveness stays 200 meanwhile).
   * `inference` says which execution provider local inference runs on, and why not a faster one.
   */
  @Get('ready')
  @ApiOkResponse({
    description: 'The database answers; `inference` reports local inference\'s execution provider.',
    schema: {
      type: 'object',
      properties: { status: { type: 'string', enum: ['ready'] }, database: { type: 'string', enum: ['up'] }, inference: INFERENCE_SCHEMA },
      required: ['status', 'database', 'inference'],
    },
  })
  @ApiServiceUnavailableResponse({
    description: 'The database does not answer (`{ status: "not_ready", database: "down" }`), or the process is draining after SIGTERM (`{ status: "draining" }`).',
  })
  async ready(): Promise<{ status: 'ready'; database: 'up'; inference: InferenceState }> {
    if (this.drain.draining) throw new ServiceUnavailableException({ status: 'draining' });
    if (!(await this.database.answers())) {
      throw new ServiceUnavailableException({ status: 'not_ready', database: 'down' });
    }
    return { status: 'ready', database: 'up', inference: this.inference.inferenceState() };
  }
}
