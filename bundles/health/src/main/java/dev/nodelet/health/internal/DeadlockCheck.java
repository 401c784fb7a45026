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
 * The liveness check: a JVM whose threads are deadlocked cannot recover, and a restart is what cures it. Only
 * {@code /livez} runs it: readiness needs the checks of the parts that serve.
 */
@Component(property = {HealthCheck.NAME + "=nodelet-deadlocks", HealthCheck.TAGS + "=" + HealthEndpoint.LIVE_TAG})
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
