package dev.nodelet.launcher;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;

/**
 * The launcher's view of the Gogo runtime: it learns each session that runs a command (a
 * {@code CommandSessionListener}), so that Ctrl-C interrupts the command that runs in the console rather than
 * stopping Nodelet, and it runs command lines for the local command channel. Gogo's classes live in its bundle, not
 * on the launcher's class path, hence the reflection.
 */
final class GogoSessions {

  private static final String PROCESSOR = "org.apache.felix.service.command.CommandProcessor";
  private static final String LISTENER = "org.apache.felix.service.command.CommandSessionListener";

  /** The command line each console session runs now; the command channel's own sessions are not here. */
  private final Map<Object, String> consoleCommands = Collections.synchronizedMap(new WeakHashMap<>());
  private final Set<Object> channelSessions = Collections.synchronizedSet(
      Collections.newSetFromMap(new WeakHashMap<>()));
  private ServiceRegistration<?> registration;

  /** Registers the session listener once the Gogo runtime is there; false if it is not installed. */
  synchronized boolean register(BundleContext context) throws ClassNotFoundException {
    if (registration != null) {
      return true;
    }
    Bundle runtime = gogoRuntime(context);
    if (runtime == null) {
      return false;
    }
    Class<?> listener = runtime.loadClass(LISTENER);
    Object proxy = Proxy.newProxyInstance(listener.getClassLoader(), new Class<?>[] {listener},
        (self, method, args) -> {
          switch (method.getName()) {
            case "beforeExecute" -> {
              if (!channelSessions.contains(args[0])) {
                consoleCommands.put(args[0], args[1].toString());
              }
              return null;
            }
            case "afterExecute" -> {
              consoleCommands.remove(args[0]);
              return null;
            }
            case "hashCode" -> {
              return System.identityHashCode(self);
            }
            case "equals" -> {
              return self == args[0];
            }
            case "toString" -> {
              return "nodelet launcher session listener";
            }
            default -> throw new UnsupportedOperationException(method.getName());
          }
        });
    registration = context.registerService(LISTENER, proxy, new Hashtable<>(Map.of()));
    return true;
  }

  private static Bundle gogoRuntime(BundleContext context) {
    for (Bundle bundle : context.getBundles()) {
      if ("org.apache.felix.gogo.runtime".equals(bundle.getSymbolicName())) {
        return bundle;
      }
    }
    return null;
  }

  /**
   * Interrupts the command the console runs now; true if there was one. Only the threads that run the command's
   * statements are interrupted (Gogo names them {@code pipe-<statement>}): interrupting the session's job would
   * also interrupt the console's own thread, and the Gogo shell ends the framework when its console ends.
   */
  boolean interruptConsoleCommand() {
    List<String> lines;
    synchronized (consoleCommands) {
      lines = new ArrayList<>(consoleCommands.values());
    }
    boolean interrupted = false;
    for (Thread thread : Thread.getAllStackTraces().keySet()) {
      String name = thread.getName();
      if (name.startsWith("pipe-") && lines.stream().anyMatch(line -> line.contains(name.substring(5).trim()))) {
        thread.interrupt();
        interrupted = true;
      }
    }
    return interrupted;
  }

  /**
   * Runs one command line in a new session whose output goes to {@code out} and {@code err}; the result of the
   * command is printed to {@code out} as the console prints it. {@code interrupter} receives what interrupts the
   * command, for a caller that goes away while it runs.
   */
  void execute(BundleContext context, String line, InputStream in, OutputStream out, OutputStream err,
      java.util.function.Consumer<Runnable> interrupter) throws Exception {
    ServiceReference<?> ref = NodeletFramework.reference(context, PROCESSOR);
    if (ref == null) {
      throw new IllegalStateException("the Gogo shell runtime is not running");
    }
    Object processor = context.getService(ref);
    try {
      Class<?> processorType = ref.getBundle().loadClass(PROCESSOR);
      Class<?> sessionType = ref.getBundle().loadClass("org.apache.felix.service.command.CommandSession");
      Object session = processorType.getMethod("createSession", InputStream.class, OutputStream.class,
          OutputStream.class).invoke(processor, in, out, err);
      channelSessions.add(session);
      Thread caller = Thread.currentThread();
      interrupter.accept(() -> {
        try {
          Object job = sessionType.getMethod("foregroundJob").invoke(session);
          if (job != null) {
            ref.getBundle().loadClass("org.apache.felix.service.command.Job").getMethod("interrupt").invoke(job);
          }
        } catch (ReflectiveOperationException e) {
          // the session is gone
        }
        caller.interrupt();
      });
      try {
        Object result = sessionType.getMethod("execute", CharSequence.class).invoke(session, line);
        if (result != null) {
          CharSequence text = (CharSequence) sessionType.getMethod("format", Object.class, int.class)
              .invoke(session, result, 0);
          out.write((text + System.lineSeparator()).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
      } catch (java.lang.reflect.InvocationTargetException e) {
        throw e.getCause() instanceof Exception cause ? cause : e;
      } finally {
        sessionType.getMethod("close").invoke(session);
      }
    } finally {
      context.ungetService(ref);
    }
  }

  synchronized void close() {
    if (registration != null) {
      try {
        registration.unregister();
      } catch (IllegalStateException e) {
        // the framework stopped first
      }
      registration = null;
    }
  }
}
