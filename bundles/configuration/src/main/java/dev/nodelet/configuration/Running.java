package dev.nodelet.configuration;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The instance a component runs with the settings in force (a strategy, a manager, a controller): replaced when a
 * new configuration is applied, closed with the component (hand it to {@link LastGoodConfiguration#closing}). Its
 * monitor is the component's lock for changes of the instance and of what is {@linkplain #handing handed} to it.
 *
 * @param <R> the instance type
 */
public final class Running<R extends AutoCloseable> implements AutoCloseable {

  private volatile R instance; // written under this; null until a valid configuration came, once stopped or closed
  private volatile boolean closed;

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
   * Makes {@code next} the instance running and closes the one before, if any, after it: for instances that may
   * overlap (stores of the one before keep serving until their managers move).
   *
   * @param next the new instance
   */
  public synchronized void replace(R next) {
    R before = swap(next);
    if (before != null) {
      close(before);
    }
  }

  /**
   * Makes {@code next} the instance running, leaving the one before open: for a caller that ends it its own way.
   *
   * @param next the new instance
   * @return the instance before; null if none
   */
  public synchronized R swap(R next) {
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
