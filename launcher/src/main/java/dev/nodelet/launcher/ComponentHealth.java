package dev.nodelet.launcher;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * What Declarative Services says about Nodelet's components, read from the {@code ServiceComponentRuntime} DTOs: a
 * component that failed to activate at once, one that waits for a reference once that lasted past a grace time.
 * The launcher does not see SCR's API classes, so the DTOs are read by reflection on their public fields.
 */
final class ComponentHealth {

  private static final String RUNTIME = "org.osgi.service.component.runtime.ServiceComponentRuntime";
  private static final int UNSATISFIED_REFERENCE = 2;
  private static final int FAILED_ACTIVATION = 16;

  private final long graceNanos;
  /** When each component was first seen waiting for a reference, by component name. */
  private final Map<String, Long> waitingSince = new HashMap<>();
  /** Services a component may wait for as long as it likes (the node's, while node mode is off). */
  private volatile Set<String> expectedMissing = Set.of();

  ComponentHealth(long graceNanos) {
    this.graceNanos = graceNanos;
  }

  /**
   * A component waiting only for services of these interfaces waits as designed: the node's API waits for the
   * {@code RegisteredNode} that only node mode registers.
   */
  void expectMissing(Set<String> interfaces) {
    expectedMissing = Set.copyOf(interfaces);
  }

  /** The problems of Nodelet's components now, one line each, keyed by component name. */
  synchronized Map<String, String> problems(BundleContext context) {
    Map<String, String> problems = new LinkedHashMap<>();
    ServiceReference<?> ref = NodeletFramework.reference(context, RUNTIME);
    if (ref == null) {
      problems.put("scr", "Declarative Services (SCR) is not running");
      return problems;
    }
    Object runtime = context.getService(ref);
    if (runtime == null) {
      return problems;
    }
    long now = System.nanoTime();
    List<String> waitingNow = new ArrayList<>();
    try {
      Class<?> type = ref.getBundle().loadClass(RUNTIME);
      Class<?> descriptionType = ref.getBundle().loadClass("org.osgi.service.component.runtime.dto"
          + ".ComponentDescriptionDTO");
      Collection<?> descriptions = (Collection<?>) type.getMethod("getComponentDescriptionDTOs", Bundle[].class)
          .invoke(runtime, (Object) new Bundle[0]);
      for (Object description : descriptions) {
        String bundle = String.valueOf(field(field(description, "bundle"), "symbolicName"));
        if (!bundle.startsWith("nodelet-")) {
          continue;
        }
        String name = (String) field(description, "name");
        Collection<?> configurations = (Collection<?>) type.getMethod("getComponentConfigurationDTOs",
            descriptionType).invoke(runtime, description);
        for (Object configuration : configurations) {
          int state = (Integer) field(configuration, "state");
          if (state == FAILED_ACTIVATION) {
            Object failure = field(configuration, "failure");
            problems.put(name, "component " + name + " (" + bundle + ") failed to activate: "
                + reason(failure == null ? "no reason given" : failure.toString()));
          } else if (state == UNSATISFIED_REFERENCE && !waitsAsDesigned(description, configuration)) {
            waitingNow.add(name);
            long since = waitingSince.computeIfAbsent(name, n -> now);
            if (now - since >= graceNanos) {
              problems.put(name, "component " + name + " (" + bundle + ") waits for "
                  + unsatisfied(description, configuration));
            }
          }
        }
      }
    } catch (ReflectiveOperationException | ClassCastException e) {
      problems.put("scr", "cannot read the state of the components: " + e);
    } finally {
      context.ungetService(ref);
    }
    waitingSince.keySet().retainAll(waitingNow);
    return problems;
  }

  private boolean waitsAsDesigned(Object description, Object configuration) throws ReflectiveOperationException {
    Set<String> expected = expectedMissing;
    if (expected.isEmpty()) {
      return false;
    }
    Map<String, String> interfaces = new HashMap<>();
    Object references = field(description, "references");
    for (int i = 0; references != null && i < Array.getLength(references); i++) {
      Object reference = Array.get(references, i);
      interfaces.put((String) field(reference, "name"), (String) field(reference, "interfaceName"));
    }
    Object missing = field(configuration, "unsatisfiedReferences");
    int count = missing == null ? 0 : Array.getLength(missing);
    for (int i = 0; i < count; i++) {
      if (!expected.contains(interfaces.get((String) field(Array.get(missing, i), "name")))) {
        return false;
      }
    }
    return count > 0;
  }

  /** "reference client (io.fabric8...KubernetesClient)", for every reference not satisfied. */
  private static String unsatisfied(Object description, Object configuration) throws ReflectiveOperationException {
    Map<String, String> interfaces = new HashMap<>();
    Object references = field(description, "references");
    for (int i = 0; references != null && i < Array.getLength(references); i++) {
      Object reference = Array.get(references, i);
      interfaces.put((String) field(reference, "name"), (String) field(reference, "interfaceName"));
    }
    List<String> names = new ArrayList<>();
    Object missing = field(configuration, "unsatisfiedReferences");
    for (int i = 0; missing != null && i < Array.getLength(missing); i++) {
      Object reference = Array.get(missing, i);
      String name = (String) field(reference, "name");
      Object target = field(reference, "target");
      names.add("reference " + name + " (" + interfaces.getOrDefault(name, "?")
          + (target == null ? "" : " matching " + target) + ")");
    }
    return names.isEmpty() ? "its references" : String.join(", ", names);
  }

  private static Object field(Object dto, String name) throws ReflectiveOperationException {
    if (dto == null) {
      return null;
    }
    Field field = dto.getClass().getField(name);
    return field.get(dto);
  }

  /**
   * The root cause of a failure as SCR gives it (a stack trace): the last "Caused by:" line, else the first line.
   * Constructor injection wraps what the component threw in an InvocationTargetException.
   */
  static String reason(String failure) {
    String reason = failure.lines().findFirst().orElse("").trim();
    for (String line : (Iterable<String>) failure.lines()::iterator) {
      if (line.startsWith("Caused by: ")) {
        reason = line.substring("Caused by: ".length()).trim();
      }
    }
    return reason;
  }
}
