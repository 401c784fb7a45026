package dev.nodelet.testing.apiserver.internal;

import dev.nodelet.testing.apiserver.Verb;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.OptionalInt;

/** Injected failures and delays, consumed by the dispatcher. */
public final class Faults {

  private static final class Failure {
    final Verb verb;
    final String resource;
    final int status;
    int remaining;

    Failure(Verb verb, String resource, int status, int remaining) {
      this.verb = verb;
      this.resource = resource;
      this.status = status;
      this.remaining = remaining;
    }

    boolean matches(Verb v, String r) {
      return verb == v && (resource == null || resource.equals(r));
    }
  }

  private final Deque<Failure> failures = new ArrayDeque<>();
  private volatile Duration delay = Duration.ZERO;

  public synchronized void failNext(Verb verb, String resource, int times, int status) {
    if (times < 0) {
      throw new IllegalArgumentException("times must not be negative, was " + times);
    }
    if (status < 400 || status > 599) {
      throw new IllegalArgumentException("status must be an HTTP error (400..599), was " + status);
    }
    if (times > 0) {
      failures.add(new Failure(verb, resource, status, times));
    }
  }

  public synchronized void clearFailures() {
    failures.clear();
  }

  /** The status of the first pending failure for this request, which is used up; empty when none applies. */
  synchronized OptionalInt take(Verb verb, String resource) {
    for (Iterator<Failure> it = failures.iterator(); it.hasNext();) {
      Failure f = it.next();
      if (f.matches(verb, resource)) {
        if (--f.remaining == 0) {
          it.remove();
        }
        return OptionalInt.of(f.status);
      }
    }
    return OptionalInt.empty();
  }

  public void delay(Duration delay) {
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay must not be negative, was " + delay);
    }
    this.delay = delay;
  }

  Duration delay() {
    return delay;
  }
}
