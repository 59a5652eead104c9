import { BaseMessages, badValue, redfishError, type SimResponse } from './responses.ts';
import type { FirmwareModel } from './firmware.ts';
import type { Timers } from './timers.ts';
import { addMember, childUri, touch, type Json, type TreeStore } from './treeStore.ts';

export const TaskOutcomes = ['Completed', 'Exception', 'Killed'] as const;
export type TaskOutcome = (typeof TaskOutcomes)[number];

/**
 * UpdateService.SimpleUpdate as BMCs implement it: 202 Accepted, a Task in the TaskService, and the task
 * progressing Running -> final state on its own. Clients must poll the task; the action reply says nothing
 * about whether the flash worked. A BMC without a TaskService answers 204 once it has flashed.
 */
export class TaskModel {
  private nextId = 1000;

  constructor(
    private readonly store: TreeStore,
    private readonly tasksKey: string | undefined,
    private readonly transferProtocols: readonly string[] | undefined,
    private readonly timers: Timers,
    private readonly behaviour: { durationMs: number; outcome: TaskOutcome },
    private readonly firmware: FirmwareModel,
  ) {}

  simpleUpdate(body: Json): SimResponse {
    const image = body.ImageURI;
    if (typeof image !== 'string' || image === '') {
      return redfishError(400, BaseMessages.ActionParameterMissing, 'The action requires the parameter ImageURI.');
    }
    const protocol = body.TransferProtocol;
    if (protocol !== undefined && this.transferProtocols && !this.transferProtocols.includes(protocol as string)) {
      return badValue('TransferProtocol', protocol);
    }
    const task = this.newTask(`Firmware update from ${image}`);
    if (!task) {
      this.firmware.flash(image);
      return { status: 204 };
    }
    this.timers.after(Math.floor(this.behaviour.durationMs / 2), () => {
      task.PercentComplete = 50;
      touch(task);
    });
    this.timers.after(this.behaviour.durationMs, () => this.finish(task, image));
    return { status: 202, body: task, headers: { Location: String(task['@odata.id']) } };
  }

  /** A Running task in the TaskService; undefined when the tree has none. */
  private newTask(name: string): Json | undefined {
    const tasks = this.tasksKey === undefined ? undefined : this.store.get(this.tasksKey);
    if (!tasks || this.tasksKey === undefined) return undefined;
    let id = String(this.nextId++);
    while (this.store.get(`${this.tasksKey}/${id}`)) id = String(this.nextId++);
    const uri = childUri(tasks, this.tasksKey, id);
    const task: Json = {
      '@odata.id': uri,
      '@odata.type': '#Task.v1_4_3.Task',
      Id: id,
      Name: name,
      TaskState: 'Running',
      TaskStatus: 'OK',
      PercentComplete: 0,
      StartTime: new Date().toISOString(),
      Messages: [],
    };
    this.store.put(`${this.tasksKey}/${id}`, task);
    addMember(tasks, uri);
    return task;
  }

  /**
   * Accepts a request for later, as firmware that queues its work does: 202 with the task as its monitor, and `run` when
   * the task's time is up; an error `run` answers ends the task in Exception with that message. Without a TaskService
   * the request runs at once.
   */
  defer(name: string, run: () => SimResponse): SimResponse {
    const task = this.newTask(name);
    if (!task) return run();
    this.timers.after(this.behaviour.durationMs, () => {
      const outcome = run();
      const failed = outcome.status >= 400;
      task.TaskState = failed ? 'Exception' : 'Completed';
      task.TaskStatus = failed ? 'Critical' : 'OK';
      task.PercentComplete = 100;
      task.EndTime = new Date().toISOString();
      if (failed)
        task.Messages = [{ MessageId: BaseMessages.OperationNotAllowed, Message: `${name} failed with HTTP ${outcome.status}.`, Severity: 'Critical' }];
      touch(task);
    });
    return { status: 202, body: task, headers: { Location: String(task['@odata.id']) } };
  }

  private finish(task: Json, image: string): void {
    task.TaskState = this.behaviour.outcome;
    task.EndTime = new Date().toISOString();
    if (this.behaviour.outcome === 'Completed') {
      task.PercentComplete = 100;
      this.firmware.flash(image);
    } else {
      task.TaskStatus = 'Critical';
      task.Messages = [{ MessageId: 'Update.1.0.ApplyFailed', Message: `Applying ${image} failed.`, Severity: 'Critical' }];
    }
    touch(task);
  }
}
