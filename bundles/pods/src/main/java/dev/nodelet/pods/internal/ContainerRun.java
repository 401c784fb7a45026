package dev.nodelet.pods.internal;

import dev.nodelet.controller.Backoff;
import io.fabric8.kubernetes.api.model.ContainerState;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import java.time.Duration;
import java.time.Instant;

/**
 * One container of a pod as Nodelet runs it: its bundle, its state in the kubelet's terms ({@code waiting} with a
 * reason, {@code running}, {@code terminated}), the last termination, restarts and back-off. Used on the pods'
 * executor only.
 */
final class ContainerRun {

  /** The kubelet's container states. */
  enum State { WAITING, RUNNING, TERMINATED }

  /** The kubelet's back-off for restarts and image pulls: 10 s before the first retry, doubling to 5 minutes. */
  static final Duration BACKOFF_INITIAL = Duration.ofSeconds(10);
  static final Duration BACKOFF_MAX = Duration.ofMinutes(5);
  /** A container that ran this long before it ended starts again at 10 s. */
  static final Duration BACKOFF_RESET_AFTER = Duration.ofMinutes(10);

  final String name;
  final String image;
  final String location;
  final Backoff backoff = Backoff.exponential(BACKOFF_INITIAL, BACKOFF_MAX).resetAfterRunning(BACKOFF_RESET_AFTER)
      .build();
  long bundleId = -1;
  String imageId = "";
  State state = State.WAITING;
  String reason = "ContainerCreating";
  String message;
  Instant startedAt;
  Instant finishedAt;
  int exitCode;
  int restartCount;
  ContainerState lastState; // the previous termination; null without one
  boolean startedOnce;

  ContainerRun(String name, String image, String location) {
    this.name = name;
    this.image = image;
    this.location = location;
  }

  /**
   * A failure: the next retry waits the next delay of the back-off.
   *
   * @param ranFor how long the container ran before it ended; {@link Duration#ZERO} for a failure to start or pull
   * @return the delay
   */
  Duration backoffFailed(Instant now, Duration ranFor) {
    return backoff.failed(nanos(now), ranFor);
  }

  /** True while a retry must wait. */
  boolean backingOff(Instant now) {
    return backoff.waiting(nanos(now));
  }

  /** When the retry may happen; {@link Instant#MIN} without a failure. */
  Instant retryAt() {
    return backoff.failures() == 0 ? Instant.MIN : Instant.EPOCH.plusNanos(backoff.notBeforeNanos());
  }

  /** The back-off counts in nanoseconds: the pods' wall clock as nanoseconds since the epoch (good until 2262). */
  private static long nanos(Instant at) {
    return Math.addExact(Math.multiplyExact(at.getEpochSecond(), 1_000_000_000L), at.getNano());
  }

  void waiting(String reason, String message) {
    this.state = State.WAITING;
    this.reason = reason;
    this.message = message;
  }

  void running(Instant at) {
    state = State.RUNNING;
    reason = null;
    message = null;
    startedAt = at;
    finishedAt = null;
    startedOnce = true;
  }

  /**
   * The container ended.
   *
   * @param at when
   * @param code 0 for a bundle that stopped itself, 1 for one that failed to start
   * @param why the message; never secret data
   */
  void terminated(Instant at, int code, String why) {
    state = State.TERMINATED;
    exitCode = code;
    reason = code == 0 ? "Completed" : "Error";
    message = why;
    finishedAt = at;
    if (startedAt == null) {
      startedAt = at;
    }
  }

  /** @return how long it ran before its termination */
  Duration ranFor() {
    return startedAt == null || finishedAt == null ? Duration.ZERO : Duration.between(startedAt, finishedAt);
  }

  /** Keeps the termination as {@code lastState}, before a restart. */
  void keepTermination() {
    lastState = new ContainerStateBuilder().withNewTerminated().withExitCode(exitCode).withReason(reason)
        .withMessage(message).withStartedAt(time(startedAt)).withFinishedAt(time(finishedAt))
        .withContainerID(containerId()).endTerminated().build();
  }

  String containerId() {
    return bundleId < 0 ? null : "osgi://" + bundleId;
  }

  /** @return the container's status as the API has it */
  ContainerStatus status() {
    ContainerStateBuilder current = new ContainerStateBuilder();
    switch (state) {
      case RUNNING -> current.withNewRunning().withStartedAt(time(startedAt)).endRunning();
      case TERMINATED -> current.withNewTerminated().withExitCode(exitCode).withReason(reason).withMessage(message)
          .withStartedAt(time(startedAt)).withFinishedAt(time(finishedAt)).withContainerID(containerId())
          .endTerminated();
      default -> current.withNewWaiting().withReason(reason).withMessage(message).endWaiting();
    }
    return new ContainerStatusBuilder().withName(name).withImage(image).withImageID(imageId)
        .withContainerID(containerId()).withReady(state == State.RUNNING).withStarted(state == State.RUNNING)
        .withRestartCount(restartCount).withState(current.build()).withLastState(lastState == null
            ? new ContainerState() : lastState).build();
  }

  static String time(Instant at) {
    return at == null ? null : Times.format(at);
  }
}
