package dev.nodelet.pods.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.time.Instant;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves one container a step towards running, the kubelet's way, on its bundle: pull (fetch the image, with
 * {@code ErrImagePull} then {@code ImagePullBackOff} and back-off), install under the container's location, start
 * ({@code running} once ACTIVE), notice a bundle that failed to start or stopped itself ({@code terminated}), and
 * restart it per {@code restartPolicy} after the back-off ({@code CrashLoopBackOff}).
 */
final class ContainerSteps {

  private static final Logger LOG = LoggerFactory.getLogger(ContainerSteps.class);

  private final BundleContext context;
  private final ImageSource images;
  private final PodEvents events;
  private final BoundedStop stops = new BoundedStop();

  ContainerSteps(BundleContext context, ImageSource images, PodEvents events) {
    this.context = context;
    this.images = images;
    this.events = events;
  }

  /** @return the bundle of the container; null if it has none (or it was uninstalled behind Nodelet's back) */
  Bundle bundle(ContainerRun c) {
    if (c.bundleId < 0) {
      return null;
    }
    Bundle bundle = context.getBundle(c.bundleId);
    return bundle == null || bundle.getState() == Bundle.UNINSTALLED || !c.location.equals(bundle.getLocation())
        ? null : bundle;
  }

  /** Hands a bundle its configuration before it starts, and again while it runs. */
  @FunctionalInterface
  interface Configurer {
    /** @return false if the bundle must not start now (the container's state says why) */
    boolean configure(Bundle bundle);
  }

  /**
   * One step of a container whose configuration is resolved.
   *
   * @param pod the pod
   * @param c the container
   * @param now the time
   * @param configurer delivers the configuration to the bundle
   */
  void step(PodState pod, ContainerRun c, Instant now, Configurer configurer) {
    Bundle bundle = bundle(c);
    if (c.bundleId >= 0 && bundle == null) {
      c.bundleId = -1;
      if (c.state == ContainerRun.State.RUNNING) {
        c.terminated(now, 1, "the bundle was uninstalled");
        ended(pod, c, now);
      }
    }
    if (c.state == ContainerRun.State.RUNNING && bundle != null && !running(bundle)) {
      c.terminated(now, 0, "the bundle stopped");
      ended(pod, c, now);
    }
    if (c.state == ContainerRun.State.RUNNING && bundle != null) {
      configurer.configure(bundle); // changes of the referenced objects reach a running bundle
    }
    if (c.state != ContainerRun.State.WAITING) {
      return;
    }
    if ("CrashLoopBackOff".equals(c.reason) || "ImagePullBackOff".equals(c.reason)
        || "ErrImagePull".equals(c.reason) || "CreateContainerError".equals(c.reason)) {
      if (c.backingOff(now)) {
        if ("ErrImagePull".equals(c.reason)) {
          c.waiting("ImagePullBackOff", "Back-off pulling image \"" + c.image + "\": " + c.message);
        }
        if ("CrashLoopBackOff".equals(c.reason)) {
          events.warning(pod.pod, c.name, "BackOff", "Back-off restarting failed container " + c.name + " in pod "
              + pod.name() + "_" + pod.namespace() + "(" + pod.uid + ")");
        } else if ("ImagePullBackOff".equals(c.reason)) {
          events.normal(pod.pod, c.name, "BackOff", "Back-off pulling image \"" + c.image + "\"");
        }
        return;
      }
    }
    if (bundle == null) {
      bundle = install(pod, c, now);
      if (bundle == null) {
        return;
      }
    }
    if (configurer.configure(bundle)) {
      start(pod, c, bundle, now);
    }
  }

  private Bundle install(PodState pod, ContainerRun c, Instant now) {
    ImageSource.Fetched fetched;
    long pulling = System.nanoTime();
    try {
      ImageRef ref = ImageRef.parse(c.image);
      events.normal(pod.pod, c.name, "Pulling", "Pulling image \"" + c.image + "\"");
      fetched = images.fetch(ref, c.location);
    } catch (IllegalArgumentException e) {
      c.waiting("InvalidImageName", e.getMessage());
      events.warning(pod.pod, c.name, "InspectFailed", e.getMessage());
      return null;
    } catch (ImagePullException e) {
      c.backoffFailed(now, java.time.Duration.ZERO);
      c.waiting("ErrImagePull", e.getMessage());
      events.warning(pod.pod, c.name, "Failed", "Failed to pull image \"" + c.image + "\": " + e.getMessage());
      LOG.info("Container {} cannot pull its image: {}", c.location, e.getMessage());
      return null;
    }
    c.backoff.reset();
    events.normal(pod.pod, c.name, "Pulled", "Successfully pulled image \"" + c.image + "\" in "
        + java.math.BigDecimal.valueOf((System.nanoTime() - pulling) / 1_000_000, 3).stripTrailingZeros()
        .toPlainString() + "s");
    try (InputStream in = Files.newInputStream(fetched.file())) {
      Bundle bundle = context.installBundle(c.location, in);
      c.bundleId = bundle.getBundleId();
      c.imageId = fetched.imageId();
      LOG.info("Container {} installed bundle {} ({}) from {}", c.location, bundle.getBundleId(),
          fetched.symbolicName(), c.image);
      events.normal(pod.pod, c.name, "Created", "Created container: " + c.name);
      return bundle;
    } catch (BundleException | IOException e) {
      c.backoffFailed(now, java.time.Duration.ZERO);
      c.waiting("CreateContainerError", "cannot install " + c.image + ": " + e.getMessage());
      events.warning(pod.pod, c.name, "Failed", "Error: " + c.message);
      return null;
    }
  }

  private void start(PodState pod, ContainerRun c, Bundle bundle, Instant now) {
    boolean restart = c.startedOnce;
    try {
      bundle.start();
    } catch (BundleException | RuntimeException e) {
      if (restart) {
        c.restartCount++;
      }
      String cause = e.getCause() == null ? e.getMessage() : e.getMessage() + ": " + e.getCause();
      c.terminated(now, 1, "the bundle failed to start: " + cause);
      LOG.info("Container {} failed to start: {}", c.location, cause);
      events.warning(pod.pod, c.name, "Failed", "Error: the bundle failed to start: " + cause);
      ended(pod, c, now);
      return;
    }
    if (restart) {
      c.restartCount++;
    }
    c.running(now);
    events.normal(pod.pod, c.name, "Started", "Started container " + c.name);
    LOG.info("Container {} running (bundle {})", c.location, bundle.getBundleId());
  }

  /** A container ended: restart it after the back-off if its pod's policy says so. */
  static void ended(PodState pod, ContainerRun c, Instant now) {
    String policy = pod.restartPolicy();
    boolean restart = policy.equals("Always") || (policy.equals("OnFailure") && c.exitCode != 0);
    c.startedOnce = true;
    if (!restart) {
      return;
    }
    java.time.Duration delay = c.backoffFailed(now, c.ranFor());
    c.keepTermination();
    c.waiting("CrashLoopBackOff", "back-off " + delay.toSeconds() + "s restarting failed container="
        + c.name + " pod=" + pod.name() + "_" + pod.namespace() + "(" + pod.uid + ")");
  }

  static boolean running(Bundle bundle) {
    return bundle.getState() == Bundle.ACTIVE || bundle.getState() == Bundle.STARTING;
  }

  /**
   * Stops and uninstalls the container's bundle within its pod's grace period, recording its termination if it ran.
   *
   * @param pod the pod, for its {@code Killing} event and its grace; null for none (a pod no longer there)
   */
  void remove(PodState pod, ContainerRun c, Instant now) {
    removeAll(pod, java.util.List.of(c), now, BoundedStop.grace(pod == null ? null : pod.pod));
  }

  /**
   * Stops and uninstalls the containers' bundles, all at once, each within the grace, as the kubelet kills a pod's
   * containers: a bundle whose stop has not returned by then is considered killed (exit code 137, a
   * {@code StopTimeout} warning) and is uninstalled once its stop returns, so that it holds nothing past the grace.
   *
   * @param pod the pod, for its events; null for none (a pod no longer there)
   * @param containers its containers to remove
   * @param now the time
   * @param grace how long their bundles may take to stop ({@link BoundedStop#grace})
   */
  void removeAll(PodState pod, java.util.List<ContainerRun> containers, Instant now, java.time.Duration grace) {
    long deadline = System.nanoTime() + grace.toNanos();
    java.util.Map<ContainerRun, java.util.concurrent.Future<?>> stopping = new java.util.LinkedHashMap<>();
    java.util.Map<ContainerRun, Boolean> ran = new java.util.HashMap<>();
    for (ContainerRun c : containers) {
      Bundle bundle = bundle(c);
      if (bundle == null && c.bundleId < 0) {
        bundle = context.getBundle(c.location);
      }
      ran.put(c, c.state == ContainerRun.State.RUNNING);
      if (c.state == ContainerRun.State.RUNNING) {
        c.terminated(now, 0, null);
      }
      if (bundle != null) {
        if (running(bundle)) {
          events.normal(pod == null ? null : pod.pod, c.name, "Killing", "Stopping container " + c.name);
        }
        Bundle target = bundle;
        stopping.put(c, stops.start(() -> {
          stopAndUninstall(c.location, target, deadline);
          images.released(c.image, c.location);
        }));
      }
    }
    stopping.forEach((c, stop) -> {
      if (!BoundedStop.await(stop, deadline)) {
        String why = "the bundle did not stop within the grace period of " + grace.toSeconds() + "s";
        if (ran.get(c)) {
          c.terminated(now.plus(grace), 137, why); // the exit code of a container killed after its grace
        }
        LOG.warn("Container {}: {}; considered killed, its bundle is uninstalled once its stop returns",
            c.location, why);
        events.warning(pod == null ? null : pod.pod, c.name, "StopTimeout", "Container " + c.name
            + " did not stop within the grace period of " + grace.toSeconds() + "s: considered killed");
      }
    });
  }

  private static void stopAndUninstall(String location, Bundle bundle, long deadline) {
    try {
      bundle.stop();
    } catch (BundleException | RuntimeException e) {
      LOG.info("Container {}: stopping its bundle failed, uninstalling it: {}", location, e.toString());
    }
    try {
      bundle.uninstall();
      if (System.nanoTime() - deadline > 0) {
        LOG.info("Container {} removed (bundle {}) after its grace period: its stop returned late", location,
            bundle.getBundleId());
      } else {
        LOG.info("Container {} removed (bundle {})", location, bundle.getBundleId());
      }
    } catch (BundleException | RuntimeException e) {
      LOG.warn("Container {}: uninstalling its bundle failed: {}", location, e.toString());
    }
  }

  /** Ends the idle stop threads. */
  void close() {
    stops.close();
  }
}
