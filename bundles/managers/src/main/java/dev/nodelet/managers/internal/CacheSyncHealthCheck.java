package dev.nodelet.managers.internal;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ObjectReceipt;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.PodReceipt;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.felix.hc.api.FormattingResultLog;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * Readiness and the condition {@code nodelet.caches.synced}: every object that registered pods reference can be
 * served by its manager's store (no failing list, watch or fetch, no closed store, not waiting for its first sync, no
 * copy from disk the API server has not confirmed). An object whose copy is stale only because nothing refreshes it
 * between gets passes ({@link ObjectReceipt#refreshedOnNextGet()}): an idle watch (state {@link ObjectState#IDLE}),
 * a {@code ttl} copy or a polled one past its time-to-live. That is the steady state of objects nobody reads, and
 * the next get lists or fetches afresh; if that fails, the receipt says so and this check fails with it. Reads the
 * managers' receipts, so it never asks the API server.
 */
@Component(property = {HealthCheck.NAME + "=nodelet-cache-sync", HealthCheck.TAGS + "=nodelet",
    HealthCheck.TAGS + "=nodelet-cache-sync"})
public final class CacheSyncHealthCheck implements HealthCheck {

  /** How many stale objects a result names; the rest are counted. */
  static final int NAMED = 5;

  private final List<ObjectManager<?>> managers = new CopyOnWriteArrayList<>();

  @Reference(name = "manager", service = ObjectManager.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC)
  void addManager(ObjectManager<?> manager) {
    managers.add(manager);
  }

  void removeManager(ObjectManager<?> manager) {
    managers.remove(manager);
  }

  @Override
  public Result execute() {
    FormattingResultLog log = new FormattingResultLog();
    if (managers.isEmpty()) {
      log.temporarilyUnavailable("no ConfigMap or Secret manager is running");
      return new Result(log);
    }
    for (ObjectManager<?> manager : managers) {
      String resource = manager.type().plural();
      Set<String> objects = new HashSet<>();
      List<String> stale = new ArrayList<>();
      int idle = 0;
      int due = 0;
      List<PodReceipt> receipts = manager.receipts();
      for (PodReceipt pod : receipts) {
        for (ObjectReceipt object : pod.objects()) {
          String key = object.namespace() + "/" + object.name();
          if (!objects.add(key)) {
            continue;
          }
          if (object.failing()) {
            stale.add(key + ": " + object.staleReason().orElse(""));
          } else if (object.refreshedOnNextGet()) {
            // nothing out of date is served from it: the next get lists or fetches afresh
            if (object.state().filter(ObjectState.IDLE::equals).isPresent()) {
              idle++;
            } else {
              due++;
            }
          }
        }
      }
      if (stale.isEmpty()) {
        log.info("{}: {} objects of {} pods fresh{}{} ({} strategy)", resource, objects.size(), receipts.size(),
            idle == 0 ? "" : ", " + idle + " of them idle (watched again on their next get)",
            due == 0 ? "" : ", " + due + " of them due for a fetch (fetched on their next get)",
            builtIn(manager));
      } else {
        log.temporarilyUnavailable("{}: {} of {} objects stale: {}{}", resource, stale.size(), objects.size(),
            String.join("; ", stale.subList(0, Math.min(NAMED, stale.size()))),
            stale.size() > NAMED ? "; ..." : "");
      }
    }
    return new Result(log);
  }

  /** Marks only the built-in's own name: the manager may move between the two reads. */
  private static String builtIn(ObjectManager<?> manager) {
    String name = manager.strategy();
    return manager.builtInStrategy() && "get".equals(name) ? "built-in get" : name;
  }
}
