package dev.nodelet.launcher;

import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Loads the {@link Demo} from {@code lib/demo} next to the launcher jar: the embedded API server with vert.x, Netty,
 * Bouncy Castle, fabric8 and Jackson. They are not on the launcher's class path, because the JDK opens every jar of
 * that path whenever a {@code ServiceLoader} looks there (java.util.logging does at its start), and each open jar
 * keeps its central directory on the heap.
 */
final class DemoLoader {

  /** Built into {@code lib/demo/nodelet-launcher-demo.jar}, not into the launcher jar. */
  static final String IMPLEMENTATION = "dev.nodelet.launcher.demo.EmbeddedDemo";

  private DemoLoader() {
  }

  /** {@code lib/demo} next to the launcher jar (or to target/classes when run from an IDE). */
  static Path folder() {
    try {
      Path self = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return self.getParent().resolve("lib").resolve("demo");
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A new demo, not started, on a class loader of the jars of {@code folder} over the launcher's. The loader stays
   * open for the rest of the process: the server loads classes until it has stopped.
   */
  static Demo load(Path folder) throws IOException {
    List<URL> jars = new ArrayList<>();
    if (Files.isDirectory(folder)) {
      try (Stream<Path> files = Files.list(folder)) {
        for (Path jar : files.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
          jars.add(toUrl(jar));
        }
      }
    }
    @SuppressWarnings("resource") // open as long as the process: see above
    URLClassLoader loader = new URLClassLoader("nodelet-demo", jars.toArray(URL[]::new), Main.class.getClassLoader());
    try {
      return loader.loadClass(IMPLEMENTATION).asSubclass(Demo.class).getConstructor().newInstance();
    } catch (ReflectiveOperationException | LinkageError e) {
      loader.close();
      throw new IOException("the embedded API server is not in " + folder + ": copy the launcher's lib/demo folder "
          + "with nodelet-launcher.jar to run the demo, or give --kubeconfig, KUBECONFIG or --in-cluster to serve a "
          + "cluster", e);
    }
  }

  private static URL toUrl(Path jar) {
    try {
      return jar.toUri().toURL();
    } catch (MalformedURLException e) {
      throw new IllegalStateException(e);
    }
  }
}
