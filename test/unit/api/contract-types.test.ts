/**
 * Compile-time checks of the contract (tsc -b checks this file; the runtime part is trivial):
 * a handler map must cover every channel, types follow the schemas, and `runnel serve`'s view of
 * the server module matches the real one.
 */
import { describe, expectTypeOf, it } from 'vitest';
import {
  channels,
  isChannel,
  type Channel,
  type ContractEvent,
  type HandlerInput,
  type Handlers,
  type Input,
  type Invoke,
  type Output,
  type Result,
} from '../../../engine/api/contract';
import { createHandlers } from '../../../engine/api/handlers';
import type { EngineEvent } from '../../../engine/api';
import type { ServeModule } from '../../../engine/cli/commands/serve';
import type * as serverModule from '../../../server/index';

describe('contract types', () => {
  it('Handlers needs every channel: leaving one out does not compile', () => {
    expectTypeOf(createHandlers).returns.toEqualTypeOf<Handlers>();
    // @ts-expect-error metrics:get (and the rest) are missing
    const partial: Handlers = { 'workflow:list': async () => [] };
    expectTypeOf(partial).toEqualTypeOf<Handlers>();
    expectTypeOf<keyof Handlers>().toEqualTypeOf<Channel>();
  });

  it('inputs and outputs come from the schemas', () => {
    expectTypeOf<Input<'instance:get'>>().toEqualTypeOf<{ id: number }>();
    // defaults apply before a handler runs: optional for callers, present for handlers
    expectTypeOf<Input<'instance:cancel'>['compensate']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<HandlerInput<'instance:cancel'>['compensate']>().toEqualTypeOf<boolean>();
    expectTypeOf<HandlerInput<'instance:list'>['limit']>().toEqualTypeOf<number>();
    expectTypeOf<Output<'workflow:save'>>().toEqualTypeOf<{
      workflowId: number;
      name: string;
      version: number;
      created: boolean;
      uiUpdated?: true;
    }>();
    expectTypeOf<Output<'workflow:get'>['definition']['nodes'][number]['id']>().toEqualTypeOf<string>();
    expectTypeOf<Result<number>>().toEqualTypeOf<
      { ok: true; value: number } | { ok: false; error: { code: string; message: string; details?: unknown } }
    >();
  });

  it('Invoke makes input optional only where the channel takes none', () => {
    const invoke: Invoke = async () => ({ ok: false, error: { code: 'NETWORK_ERROR', message: 'not here' } });
    expectTypeOf(invoke('workflow:list')).resolves.toEqualTypeOf<Result<Output<'workflow:list'>>>();
    expectTypeOf(invoke('instance:list')).resolves.toEqualTypeOf<Result<Output<'instance:list'>>>();
    // @ts-expect-error instance:get needs its id
    void invoke('instance:get');
    // @ts-expect-error no such channel
    void invoke('instance:explode', {});
  });

  it('contract events are engine events minus the engine-internal ones', () => {
    expectTypeOf<ContractEvent['type']>().toEqualTypeOf<Exclude<EngineEvent['type'], 'clock.jumped' | 'worker.turn'>>();
    expectTypeOf<ContractEvent>().toExtend<EngineEvent>();
  });

  it('runnel serve loads a server module that satisfies its view of it', () => {
    expectTypeOf<typeof serverModule>().toExtend<ServeModule>();
    expectTypeOf(channels).toEqualTypeOf<Channel[]>();
    expectTypeOf(isChannel).guards.toEqualTypeOf<Channel>();
  });
});
