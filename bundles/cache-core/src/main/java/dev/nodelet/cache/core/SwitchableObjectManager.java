package dev.nodelet.cache.core;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.StoreStrategy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import org.osgi.annotation.versioning.ProviderType;

/**
 * An {@link ObjectManager} as its owner sees it: the owner chooses the strategy and closes it.
 *
 * <p>A strategy change never loses a registration and never fails a get: the new store receives the references of
 * every registered pod before it answers, and the old store is closed once the gets that started on it have
 * finished.
 *
 * @param <T> the Kubernetes type of the objects
 */
@ProviderType
public interface SwitchableObjectManager<T extends HasMetadata> extends ObjectManager<T>, AutoCloseable {

  /**
   * Moves to a store of another strategy.
   *
   * @param name the strategy's name, e.g. {@code watch}, for listings and logs
   * @param strategy the strategy
   * @throws RuntimeException whatever {@link StoreStrategy#createStore} throws; the manager then stays as it was
   */
  void useStrategy(String name, StoreStrategy strategy);

  /** Moves back to the built-in {@code get} strategy, as when no strategy service is available. */
  void useBuiltInStrategy();

  /**
   * Sends the watches' due bookmarks and ends those past their deadline, judged by the manager's clock. A manager
   * built with {@link ObjectManagers.Builder#manualTicks()} does this only when called, so a test that moves its clock
   * decides when; others do it every second on their timer thread as well.
   */
  void tick();

  /**
   * Closes the store in use and ends every watch, and stops the manager's threads; later gets and watches fail
   * with {@link IllegalStateException} and later registrations are ignored. Idempotent.
   */
  @Override
  void close();
}
