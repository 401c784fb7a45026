package dev.nodelet.configuration;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The instance a component runs with the settings in force (a strategy, a manager, a controller): replaced when a
 * new configuration is applied, closed with the component (hand it to {@link LastGoodConfiguration#closing}). Its
 * monitor is the component's lock for changes of the instance and of what is {@linkplain #handing handed} to it.
 *
 * <p>An instance that a new one {@linkplain #replace replaces} is retired: closed at once, unless the component
 * gives a retiring hook of its own ({@link #retiring}) for instances whose users move to the new one in their own
 * time (a strategy whose stores keep serving until their managers take new ones). {@link #stop} and {@link #close}
 * always close at once.
 *
 * @param <R> the instance type
 */
public final class Running<R extends AutoCloseable> implements AutoCloseable {

  private final Consumer<? super R> retire;
  private volatile R instance; // written under this; null until a valid configuration came, once stopped or closed
  private volatile boolean closed;

  /** An instance that a new one replaces is closed at once. */
  public Running() {
    this.retire = Running::close;
  }

  private Running(Consumer<? super R> retire) {
    this.retire = Objects.requireNonNull(retire, "retire");
  }

  /**
   * Instances that a new one replaces are handed to {@code retire}, which must see them closed once their users
   * have moved on (and not wait for that); {@link #stop} and {@link #close} still close at once.
   *
   * @param retire ends an instance replaced, in its own time
   * @param <R> the instance type
   * @return a holder with no instance yet
   */
  public static <R extends AutoCloseable> Running<R> retiring(Consumer<? super R> retire) {
    return new Running<>(retire);
  }

  /** @return the instance running; empty until a valid configuration came */
  public Optional<R> get() {
    return Optional.ofNullable(instance);
  }

  /**
   * Asks the instance running, or answers {@code none} while there is none (a component waiting for a valid
   * configuration still answers its metrics and shell commands).
   *
   * @param query what to ask it
   * @param none the answer without an instance
   * @param <V> the answer type
   * @return its answer, or {@code none}
   */
  public <V> V ask(Function<? super R, ? extends V> query, V none) {
    R current = instance;
    return current == null ? none : query.apply(current);
  }

  /**
   * Makes {@code next} the instance running and retires the one before, if any, after it (closed at once unless
   * {@link #retiring} says otherwise): the two may overlap.
   *
   * @param next the new instance
   */
  public synchronized void replace(R next) {
    R before = swap(next);
    if (before != null) {
      retire.accept(before);
    }
  }

  private R swap(R next) {
    R before = instance;
    instance = next;
    return before;
  }

  /** Closes the instance running, if any; none runs until the next {@link #replace}. */
  public synchronized void stop() {
    R current = swap(null);
    if (current != null) {
      close(current);
    }
  }

  /** Closes the instance running, if any, for good: the component is deactivated. */
  @Override
  public synchronized void close() {
    closed = true;
    stop();
  }

  /** @return whether {@link #close} ended it: a component asked after its deactivation says so */
  public boolean closed() {
    return closed;
  }

  private static void close(AutoCloseable instance) {
    try {
      instance.close();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("closing " + instance + " failed: " + e.getMessage(), e);
    }
  }

  /**
   * What the component is given for its instances (driver services, pods): each one is handed to the instance
   * running and, with {@link Handed#handTo}, to each one that replaces it.
   *
   * @param key what tells the items apart; an item of a key already there replaces the one before
   * @param add hands an item to an instance
   * @param remove takes an item back from an instance
   * @param <K> the key type
   * @param <T> the item type
   * @return the items, none yet
   */
  public <K, T> Handed<K, T> handing(Function<? super T, ? extends K> key, BiConsumer<? super R, ? super T> add,
      BiConsumer<? super R, ? super T> remove) {
    return new Handed<>(key, add, remove);
  }

  /**
   * Items handed to the instance running; guarded by the {@link Running} they belong to.
   *
   * @param <K> the key type
   * @param <T> the item type
   */
  public final class Handed<K, T> {

    private final Map<K, T> items = new LinkedHashMap<>(); // guarded by Running.this
    private final Function<? super T, ? extends K> key;
    private final BiConsumer<? super R, ? super T> add;
    private final BiConsumer<? super R, ? super T> remove;

    private Handed(Function<? super T, ? extends K> key, BiConsumer<? super R, ? super T> add,
        BiConsumer<? super R, ? super T> remove) {
      this.key = key;
      this.add = add;
      this.remove = remove;
    }

    /** Keeps {@code item} and hands it to the instance running, if any. */
    public void add(T item) {
      synchronized (Running.this) {
        items.put(key.apply(item), item);
        get().ifPresent(current -> add.accept(current, item));
      }
    }

    /** Forgets {@code item} and takes it back from the instance running, if any. */
    public void remove(T item) {
      synchronized (Running.this) {
        items.remove(key.apply(item));
        get().ifPresent(current -> remove.accept(current, item));
      }
    }

    /** Hands every item kept to {@code next}, a new instance. */
    public void handTo(R next) {
      synchronized (Running.this) {
        items.values().forEach(item -> add.accept(next, item));
      }
    }
  }
}
