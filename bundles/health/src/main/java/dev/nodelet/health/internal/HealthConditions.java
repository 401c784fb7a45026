package dev.nodelet.health.internal;

import java.util.Dictionary;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.felix.hc.api.execution.HealthCheckExecutor;
import org.apache.felix.hc.api.execution.HealthCheckSelector;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.condition.Condition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers an OSGi condition ({@code org.osgi.service.condition.Condition} with {@code osgi.condition.id}) while
 * the health checks of a tag pass, so that components can wait for them, e.g. with
 * {@code osgi.ds.satisfying.condition.target=(osgi.condition.id=nodelet.caches.synced)}. It runs the checks every
 * {@value #PERIOD_SECONDS} s on one thread of its own.
 */
@Component(service = {}, immediate = true)
public final class HealthConditions {

  /** Condition id by the tag of the checks that decide it. */
  static final Map<String, String> CONDITIONS = Map.of(
      "nodelet.caches.synced", "nodelet-cache-sync",
      "nodelet.slices.published", "nodelet-dra-publishing",
      "nodelet.ready", HealthEndpoint.READY_TAG);

  static final int PERIOD_SECONDS = 2;

  private static final Logger LOG = LoggerFactory.getLogger(HealthConditions.class);

  private final BundleContext context;
  private final HealthCheckExecutor executor;
  private final ScheduledExecutorService timer;
  private final Map<String, ServiceRegistration<Condition>> registered = new HashMap<>(); // timer thread only

  @Activate
  public HealthConditions(BundleContext context, @Reference(name = "executor") HealthCheckExecutor executor) {
    this.context = context;
    this.executor = executor;
    this.timer = Executors.newSingleThreadScheduledExecutor(task -> {
      Thread t = new Thread(task, "nodelet-health-conditions");
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::update, 0, PERIOD_SECONDS, TimeUnit.SECONDS);
  }

  private void update() {
    try {
      CONDITIONS.forEach((id, tag) -> {
        boolean holds = HealthReport.of(tag, executor.execute(HealthCheckSelector.tags(tag))).healthy();
        ServiceRegistration<Condition> registration = registered.get(id);
        if (holds && registration == null) {
          Dictionary<String, Object> properties = new Hashtable<>();
          properties.put(Condition.CONDITION_ID, id);
          registered.put(id, context.registerService(Condition.class, Condition.INSTANCE, properties));
          LOG.info("Condition {} holds", id);
        } else if (!holds && registration != null) {
          registered.remove(id).unregister();
          LOG.info("Condition {} no longer holds", id);
        }
      });
    } catch (RuntimeException e) {
      // a bundle stopping under the checks; the next round tries again
      LOG.debug("Health conditions not updated: {}", e.toString());
    }
  }

  @Deactivate
  void deactivate() {
    timer.shutdownNow();
    try {
      timer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    registered.values().forEach(registration -> {
      try {
        registration.unregister();
      } catch (IllegalStateException e) {
        // already gone with the bundle
      }
    });
    registered.clear();
  }
}
