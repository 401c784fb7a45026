package dev.nodelet.health.internal;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.service.component.annotations.Component;

/**
 * The liveness check: a JVM whose threads are deadlocked cannot recover, and a restart is what cures it. Tagged for
 * {@code /livez} and {@code /readyz}.
 */
@Component(property = {HealthCheck.NAME + "=nodelet-deadlocks", HealthCheck.TAGS + "=" + HealthEndpoint.LIVE_TAG,
    HealthCheck.TAGS + "=" + HealthEndpoint.READY_TAG})
public final class DeadlockCheck implements HealthCheck {

  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();

  @Override
  public Result execute() {
    long[] ids = threads.findDeadlockedThreads();
    if (ids == null) {
      return new Result(Result.Status.OK, "no deadlocked threads");
    }
    List<String> names = new ArrayList<>();
    for (ThreadInfo info : threads.getThreadInfo(ids)) {
      if (info != null) {
        names.add(info.getThreadName());
      }
    }
    return new Result(Result.Status.CRITICAL, ids.length + " deadlocked threads: " + String.join(", ", names));
  }
}
