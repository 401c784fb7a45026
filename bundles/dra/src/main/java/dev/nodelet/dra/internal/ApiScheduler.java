package dev.nodelet.dra.internal;

import dev.nodelet.controller.Scheduler;
import java.time.Duration;

/** The controller runtime's {@link Scheduler} on a {@link dev.nodelet.dra.runtime.Scheduler} of the API. */
final class ApiScheduler implements Scheduler {

  private final dev.nodelet.dra.runtime.Scheduler api;

  ApiScheduler(dev.nodelet.dra.runtime.Scheduler api) {
    this.api = api;
  }

  @Override
  public long nanoTime() {
    return api.nanoTime();
  }

  @Override
  public Task schedule(Runnable task, Duration delay) {
    return api.schedule(task, delay)::cancel;
  }
}
