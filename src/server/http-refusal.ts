/** An InvalidArgument that HTTP names with its own status: 413 body too large, 415 wrong content type, 404 no route, 405 wrong method. */
import { RunlogError } from '../errors.ts';

export class HttpRefusal extends RunlogError {
  constructor(
    readonly status: 404 | 405 | 413 | 415,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super('InvalidArgument', message);
  }
}
