package dev.nodelet.dra.claims.internal;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What {@code ClaimManager.Builder} collected, for the implementation.
 *
 * @param executor the executor to run on, or null for one of the manager's own
 * @param io where claims are read and the checkpoint is written, or null: a small pool of the manager's own, or
 *     {@code executor} when that is given
 */
public record ManagerSettings(KubernetesClient client, String nodeName, Path stateDirectory, Clock clock,
    ScheduledExecutorService executor, Duration sweepPeriod, Duration retryInitial, Duration retryMax,
    Duration healthRetry, FeatureGates gates, Executor io) {
}
