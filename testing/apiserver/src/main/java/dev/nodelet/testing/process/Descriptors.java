package dev.nodelet.testing.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** What this JVM holds open, read from {@code /proc/self/fd} (Linux): for tests that a close leaves nothing open. */
public final class Descriptors {

  private Descriptors() {
  }

  /** @return how many sockets this JVM holds open, of any kind (an embedded server's included) */
  public static long sockets() {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.filter(fd -> {
        try {
          return Files.readSymbolicLink(fd).toString().startsWith("socket:");
        } catch (IOException e) {
          return false; // closed while listing, such as the listing's own
        }
      }).count();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list /proc/self/fd", e);
    }
  }
}
