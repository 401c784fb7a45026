package dev.nodelet.testing.apiserver.internal;

import dev.nodelet.testing.apiserver.internal.ObjectStore.Change;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watch verb: a watch starts from the current state or resumes after a resourceVersion from a bounded history
 * (410 Gone before it), then gets every change the store hands over, and bookmarks on a timer. The history and the
 * set of watches change under the store's event lock, so a watch starts from a consistent state.
 */
final class Watches {

  private static final Logger LOG = LoggerFactory.getLogger(Watches.class);

  private final ObjectStore store;
  private final int historySize;
  private final Duration bookmarkInterval;
  private final ArrayDeque<Change> history = new ArrayDeque<>(); // guarded by the event lock
  private long compactedResourceVersion; // guarded by the event lock: events up to here are gone
  private final Set<WatchSession> watches = ConcurrentHashMap.newKeySet();
  // the same watches by the name their field selector requires, and those that require none: a write is matched
  // against the watches that can select it only (a node watches thousands of objects one by one)
  private final Map<String, Set<WatchSession>> watchesByName = new ConcurrentHashMap<>();
  private final Set<WatchSession> unnamedWatches = ConcurrentHashMap.newKeySet();
  private volatile ScheduledExecutorService timer;

  Watches(ObjectStore store, int historySize, Duration bookmarkInterval) {
    this.store = store;
    this.historySize = historySize;
    this.bookmarkInterval = bookmarkInterval;
  }

  /** Starts the timer that sends bookmarks and ends watches at their timeout. */
  synchronized void start() {
    if (timer == null) {
      timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "embedded-apiserver-timer");
        t.setDaemon(true);
        return t;
      });
      long period = bookmarkInterval.toMillis();
      timer.scheduleAtFixedRate(this::sendBookmarks, period, period, TimeUnit.MILLISECONDS);
    }
  }

  /** Ends every watch and stops the timer. */
  synchronized void stop() {
    cutWatches();
    if (timer != null) {
      timer.shutdownNow();
      timer = null;
    }
  }

  /** One stored change, from the store under its event lock: kept in the history and sent to the watches. */
  void changed(Change change) {
    history.addLast(change);
    while (history.size() > historySize) {
      compactedResourceVersion = history.removeFirst().resourceVersion();
    }
    deliver(unnamedWatches, change);
    deliver(watchesByName.getOrDefault(change.name(), Set.of()), change);
  }

  private void deliver(Set<WatchSession> sessions, Change change) {
    for (WatchSession session : sessions) {
      deliver(session, change);
      if (session.isClosed()) {
        close(session); // its client went away while we wrote to it
      }
    }
  }

  private static void deliver(WatchSession session, Change change) {
    if (session.resumeAfter != null && change.resourceVersion() <= session.resumeAfter
        || !session.selectedName.isEmpty() && !session.selectedName.equals(change.name())) {
      return;
    }
    boolean before = session.selects(change.oldAttributes());
    boolean after = session.selects(change.newAttributes());
    if (before && after) {
      session.send("MODIFIED", change.object());
    } else if (before) {
      session.send("DELETED", change.object());
    } else if (after) {
      session.send("ADDED", change.object());
    }
  }

  /** A watch request: its parameters checked, answered with the session its transport opens. */
  MockResponse watch(RecordedRequest request, RequestInfo info, Resource resource) {
    String rv = Objects.requireNonNullElse(info.param("resourceVersion"), "");
    boolean sendInitialEvents = "true".equals(info.param("sendInitialEvents"));
    boolean bookmarks = "true".equals(info.param("allowWatchBookmarks"));
    if (sendInitialEvents) {
      if (!"NotOlderThan".equals(info.param("resourceVersionMatch"))) {
        return Status.response(422, "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
            + "resourceVersionMatch to NotOlderThan");
      }
      if (!bookmarks) {
        return Status.response(422, "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting "
            + "allowWatchBookmarks to true");
      }
    }
    Long resumeAfter = null;
    if (!sendInitialEvents && !rv.isEmpty() && !"0".equals(rv)) {
      try {
        resumeAfter = Long.parseLong(rv);
      } catch (NumberFormatException e) {
        return Status.response(400, "invalid resource version: \"" + rv + "\"");
      }
    }
    long timeout = 0;
    if (info.param("timeoutSeconds") != null) {
      timeout = Long.parseLong(info.param("timeoutSeconds"));
    }
    WatchSession session = new WatchSession(info, store.query(info), info.param("fieldSelector"), resumeAfter,
        sendInitialEvents, bookmarks, timeout);
    if (Tables.wanted(request.getHeader("Accept"))) {
      AtomicBoolean first = new AtomicBoolean(true);
      String include = info.param("includeObject");
      session.encodeWith(object -> Tables.of(resource, List.of(Json.read(object)), Json.read(object)
          .path("metadata").path("resourceVersion").asText(null), include, first.getAndSet(false)).toString());
    }
    return new MockResponse().withWebSocketUpgrade(new WebSocketWatch(session, this));
  }

  /** Starts a session whose transport is ready: the initial state or the missed events, then live events. */
  void open(WatchSession session) {
    synchronized (store.eventLock()) {
      if (session.resumeAfter != null) {
        if (session.resumeAfter < compactedResourceVersion) {
          session.send("ERROR", Status.json(410, "too old resource version: " + session.resumeAfter + " ("
              + compactedResourceVersion + ")"));
          session.close();
          return;
        }
        for (Change change : history) {
          deliver(session, change);
        }
      } else {
        if (session.selectedName.isEmpty()) {
          store.forEach((attributes, object) -> {
            if (session.selects(attributes)) {
              session.send("ADDED", object);
            }
          });
        } else {
          store.forEachNamed(session.selectedName, (attributes, object) -> {
            if (session.selects(attributes)) {
              session.send("ADDED", object);
            }
          });
        }
        if (session.sendInitialEvents) {
          session.send("BOOKMARK", bookmark(session, true));
        }
      }
      watches.add(session);
      if (session.selectedName.isEmpty()) {
        unnamedWatches.add(session);
      } else {
        watchesByName.compute(session.selectedName, (n, named) -> {
          Set<WatchSession> sessions = named == null ? ConcurrentHashMap.newKeySet() : named;
          sessions.add(session);
          return sessions;
        });
      }
    }
    LOG.debug("watch opened: {} {} fieldSelector={}", session.request.resource(),
        session.request.namespace(), session.fieldSelector);
    ScheduledExecutorService t = timer;
    if (session.timeoutSeconds > 0 && t != null) {
      t.schedule(() -> close(session), session.timeoutSeconds, TimeUnit.SECONDS);
    }
  }

  /** Ends a session (from the server side, or after its transport closed). */
  void close(WatchSession session) {
    if (watches.remove(session)) {
      if (session.selectedName.isEmpty()) {
        unnamedWatches.remove(session);
      } else {
        watchesByName.computeIfPresent(session.selectedName,
            (n, named) -> named.remove(session) && named.isEmpty() ? null : named);
      }
    }
    session.close();
  }

  private String bookmark(WatchSession session, boolean initialEventsEnd) {
    long rv = Math.max(store.currentResourceVersion(), session.resumeAfter == null ? 0 : session.resumeAfter);
    String kind = Resources.find(session.request.apiVersion(), session.request.resource()).map(Resource::kind)
        .orElse("Unknown");
    String annotations = initialEventsEnd ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" : "";
    return "{\"kind\":\"" + kind + "\",\"apiVersion\":\"" + session.request.apiVersion()
        + "\",\"metadata\":{\"resourceVersion\":\"" + rv + "\"" + annotations + "}}";
  }

  private void sendBookmarks() {
    synchronized (store.eventLock()) {
      for (WatchSession session : watches) {
        if (session.bookmarks) {
          session.send("BOOKMARK", bookmark(session, false));
        }
      }
    }
  }

  void cutWatches() {
    for (WatchSession session : List.copyOf(watches)) {
      close(session);
    }
  }

  int openWatches(String resource, String fieldSelector) {
    return (int) watches.stream()
        .filter(s -> !s.isClosed() && s.request.resource().equals(resource))
        .filter(s -> fieldSelector == null || fieldSelector.equals(s.fieldSelector))
        .count();
  }

  /** The session a watch response would open, when the front end serves it over HTTP instead of WebSocket. */
  static WatchSession sessionOf(MockResponse response) {
    return response.getWebSocketListener() instanceof WebSocketWatch w ? w.session() : null;
  }
}
