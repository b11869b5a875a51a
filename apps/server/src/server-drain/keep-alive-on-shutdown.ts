import type { Server } from 'node:http';
import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';

/**
 * Idle kept-alive connections stay open HTTP_KEEP_ALIVE_TIMEOUT_S (65 s) for the load balancer's
 * sake. Closing the server closes those idle at that moment, but one still answering a request
 * stays open for that whole timeout once its answer is sent, and holds the process past its
 * shutdown bound. Once the application closes, no balancer sends here any more: a connection is
 * closed as soon as its answer is out.
 */
@Injectable()
export class KeepAliveOnShutdown implements BeforeApplicationShutdown {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  beforeApplicationShutdown(): void {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (server) server.keepAliveTimeout = 1;
  }
}
