import type { ClientContext } from './clientContext.ts';
import { RedfishError } from './errors.ts';
import type { RedfishResource } from './http.ts';
import { arr, obj, str } from './json.ts';
import { pollUntil } from './poll.ts';

const failed: readonly string[] = ['Exception', 'Killed', 'Cancelled'];
const terminal: readonly string[] = ['Completed', ...failed];

export interface TaskResult {
  taskUri: string;
  state: 'Completed';
  messages: string[];
}

function messagesOf(task: RedfishResource): string[] {
  return arr(task.body.Messages).flatMap((m) => str(obj(m).MessageId) ?? str(obj(m).Message) ?? []);
}

function isDone(task: RedfishResource): boolean {
  const state = str(task.body.TaskState);
  // A task monitor answers 202 while running and the operation's own result (no TaskState) once done.
  return state === undefined ? task.status !== 202 : terminal.includes(state);
}

/** Polls a Task (or task monitor) until it ends; Exception/Killed/Cancelled become REDFISH_TASK_FAILED. */
export async function awaitTask(ctx: ClientContext, taskUri: string): Promise<TaskResult> {
  const task = await pollUntil(() => ctx.http.get(taskUri), isDone, {
    intervalMs: ctx.timing.pollIntervalMs,
    timeoutMs: ctx.timing.taskTimeoutMs,
    what: `task ${taskUri} to finish`,
  });
  const state = str(task.body.TaskState) ?? 'Completed';
  const messages = messagesOf(task);
  if (failed.includes(state) || task.body.TaskStatus === 'Critical') {
    const detail = messages.length > 0 ? ` (${messages.join(', ')})` : '';
    throw new RedfishError('REDFISH_TASK_FAILED', `Task ${taskUri} ended ${state}${detail}`, { messageIds: messages });
  }
  return { taskUri, state: 'Completed', messages };
}
