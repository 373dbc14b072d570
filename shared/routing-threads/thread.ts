// The searches of the parallel solve, in a worker thread (started and kept by pool.ts; bundled beside
// the run worker as routing-thread.js). Runs `solveRouting` with its own seed; at each sync point it posts its
// best solution and (unless it is the anchor, thread 0) blocks until the coordinator answers with the
// best of the others, which the solver adopts if it is better. Blocking keeps the solver synchronous
// and the exchange deterministic for iteration-limited runs.
import { parentPort, receiveMessageOnPort } from "node:worker_threads";
import { travelFromSpec } from "#shared/routing/matrix";
import type { Elite, EliteExchange } from "#shared/routing/model";
import { solveRoutingWithElite } from "#shared/routing/solver";
import type { EliteAnswer, ThreadInput, ThreadMessage } from "./protocol.ts";

// Threads are kept between solves (pool.ts): each message is one search.
parentPort!.on("message", (input: ThreadInput) => search(input));

function search(input: ThreadInput): void {
  const post = (message: ThreadMessage) => parentPort!.postMessage(message);
  const exchange: EliteExchange = {
    epoch:
      "iterations" in input.sync
        ? (
            (every) => (iterations: number) =>
              Math.floor(iterations / every)
          )(input.sync.iterations)
        : (
            (every, since) => () =>
              Math.floor((Date.now() - since) / every)
          )(input.sync.ms, input.sync.since),
    sync(epoch: number, best: Elite): Elite | undefined {
      post({ kind: "elite", index: input.index, epoch, elite: best });
      if (input.index === 0) return undefined;
      return awaitAnswer(input, epoch)?.elite ?? undefined;
    },
  };
  const timeLimitMs = input.deadline === Infinity ? Infinity : Math.max(0, input.deadline - Date.now());
  const { solution, best } = solveRoutingWithElite(
    { ...input.problem, travel: travelFromSpec(input.travel) },
    {
      seed: input.seed,
      timeLimitMs,
      ...(input.objective ? { objective: input.objective } : {}),
      ...(input.maxIterations !== undefined ? { maxIterations: input.maxIterations } : {}),
      ...(input.earlyStop !== undefined ? { earlyStop: input.earlyStop } : {}),
      ...(input.underloadCost !== undefined ? { underloadCost: input.underloadCost } : {}),
      mustStop: () => Atomics.load(input.stop, 0) !== 0,
      exchange,
    },
  );
  post({ kind: "done", index: input.index, solution, best });
  input.answers.close();
}

function awaitAnswer(input: ThreadInput, epoch: number): EliteAnswer | undefined {
  for (;;) {
    const seen = Atomics.load(input.answered, input.index);
    if (seen >= epoch) {
      // Answers arrive in epoch order; older ones (none in practice) are skipped.
      for (let received = receiveMessageOnPort(input.answers); received; received = receiveMessageOnPort(input.answers)) {
        const answer = received.message as EliteAnswer;
        if (answer.epoch === epoch) return answer;
      }
    }
    // Woken by the coordinator's notify; the timeout only guards against a notify seen before the message.
    Atomics.wait(input.answered, input.index, seen, 50);
  }
}
