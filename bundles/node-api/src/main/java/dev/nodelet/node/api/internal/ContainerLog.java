package dev.nodelet.node.api.internal;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The last lines of one container, bounded, and the followers waiting for the next: the log service keeps only a
 * short history of every bundle together, so each container keeps its own.
 */
final class ContainerLog {

  private final int capacity;
  private final ArrayDeque<LogLine> lines = new ArrayDeque<>(); // guarded by this
  private long next; // guarded by this
  private boolean closed; // guarded by this

  ContainerLog(int capacity) {
    this.capacity = capacity;
  }

  synchronized void add(Instant time, String text) {
    if (closed) {
      return;
    }
    lines.addLast(new LogLine(next++, time, text));
    while (lines.size() > capacity) {
      lines.removeFirst();
    }
    notifyAll();
  }

  /** @return every line kept, oldest first */
  synchronized List<LogLine> lines() {
    return new ArrayList<>(lines);
  }

  /**
   * Waits up to {@code timeoutMillis} for lines after {@code sequence}.
   *
   * @return the lines after it (empty after the wait), or null once this log is closed
   */
  synchronized List<LogLine> after(long sequence, long timeoutMillis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (!closed && (lines.isEmpty() || lines.getLast().sequence() <= sequence)) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left <= 0) {
        return List.of();
      }
      wait(left);
    }
    if (closed) {
      return null;
    }
    List<LogLine> newer = new ArrayList<>();
    for (LogLine line : lines) {
      if (line.sequence() > sequence) {
        newer.add(line);
      }
    }
    return newer;
  }

  /** Ends every follower and keeps nothing more: the container's bundles are gone, or the server stops. */
  synchronized void close() {
    closed = true;
    lines.clear();
    notifyAll();
  }
}
