import { Injectable } from '@nestjs/common';
import { DatabaseHealth } from '@switchboard/persistence';

/** Whether the database answers, for the readiness probe (the controller decides the HTTP answer). */
@Injectable()
export class DatabaseReadiness {
  constructor(private readonly database: DatabaseHealth) {}

  answers(): Promise<boolean> {
    return this.database.ping();
  }
}
