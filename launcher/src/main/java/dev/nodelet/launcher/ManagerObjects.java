package dev.nodelet.launcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

/** What the object managers hold, for the demo's start lines; read through the managers' API as their bundle sees it. */
final class ManagerObjects {

  private static final String MANAGER = "dev.nodelet.objectcache.ObjectManager";

  private ManagerObjects() {
  }

  /**
   * One line per resource ("configmaps via watch: default/web-config (1 pod, RUNNING), ..."), once the managers hold
   * at least {@code expected} objects in all or the timeout passes.
   */
  static List<String> list(Supplier<BundleContext> framework, int expected, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<String> lines;
    int count;
    do {
      lines = new ArrayList<>();
      count = 0;
      BundleContext context = framework.get();
      if (context == null) {
        break; // stopped meanwhile
      }
      ServiceReference<?>[] refs;
      try {
        refs = context.getAllServiceReferences(MANAGER, null);
      } catch (InvalidSyntaxException e) {
        throw new IllegalStateException(e);
      }
      for (ServiceReference<?> ref : refs == null ? new ServiceReference<?>[0] : refs) {
        count += describe(context, ref, lines);
      }
      if (count >= expected) {
        break;
      }
      Thread.sleep(100);
    } while (System.nanoTime() < deadline);
    lines.sort(null);
    return lines;
  }

  /** Adds the line of one manager; returns how many objects it holds. */
  private static int describe(BundleContext context, ServiceReference<?> ref, List<String> lines) {
    Object manager = context.getService(ref);
    try {
      Class<?> type = ref.getBundle().loadClass(MANAGER);
      List<?> objects = (List<?>) type.getMethod("objects").invoke(manager);
      List<String> described = new ArrayList<>();
      for (Object o : objects) {
        Class<?> record = o.getClass();
        Object state = ((Optional<?>) record.getMethod("state").invoke(o)).map(Object::toString).orElse("-");
        described.add(record.getMethod("namespace").invoke(o) + "/" + record.getMethod("name").invoke(o)
            + " (" + record.getMethod("references").invoke(o) + " pod(s), " + state + ")");
      }
      lines.add(ref.getProperty("nodelet.resource") + " via " + type.getMethod("strategy").invoke(manager)
          + ": " + (described.isEmpty() ? "none" : String.join(", ", described)));
      return objects.size();
    } catch (ReflectiveOperationException e) {
      lines.add("cannot list " + ref.getProperty("nodelet.resource") + ": " + e);
      return 0;
    } finally {
      context.ungetService(ref);
    }
  }
}
