package dev.nodelet.pods.internal;

import dev.nodelet.pods.PodBundles;
import dev.nodelet.pods.PodDevice;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.hooks.service.EventListenerHook;
import org.osgi.framework.hooks.service.FindHook;
import org.osgi.framework.hooks.service.ListenerHook.ListenerInfo;

/**
 * The devices of each container as {@link PodDevice} services, one per device, registered by Nodelet's bundle and
 * visible only to the bundles at the container's location or below it: a find hook leaves them out of other
 * bundles' lookups and an event listener hook out of their service events (service trackers and Declarative
 * Services included). A container's services change only when its devices change, and go with the pod.
 */
final class DeviceServices implements AutoCloseable {

  private final BundleContext context; // null: publishes nothing
  private final List<ServiceRegistration<?>> hooks = new ArrayList<>();
  private final Map<String, Published> byLocation = new HashMap<>(); // guarded by this

  private record Published(List<PodDevices.Device> devices, List<ServiceRegistration<PodDevice>> registrations) {
  }

  /** Registers the hooks first, so that no device service is ever seen by another bundle. */
  DeviceServices(BundleContext context) {
    this.context = context;
    if (context != null) {
      Hooks hook = new Hooks(context.getBundle().getBundleId());
      hooks.add(context.registerService(FindHook.class, hook, null));
      hooks.add(context.registerService(EventListenerHook.class, hook, null));
    }
  }

  /** Publishes nothing (a runtime built without a framework's bundle context of its own). */
  static DeviceServices none() {
    return new DeviceServices(null);
  }

  /**
   * Registers the container's devices as services, replacing what it had when they differ.
   *
   * @param state the pod
   * @param container the container's name
   * @param location the container's bundle location
   * @param devices its devices, in the order of its configuration; none withdraws its services
   */
  synchronized void publish(PodState state, String container, String location, List<PodDevices.Device> devices) {
    if (context == null) {
      return;
    }
    Published current = byLocation.get(location);
    if (current != null && current.devices().equals(devices)) {
      return;
    }
    withdraw(location);
    if (devices.isEmpty()) {
      return;
    }
    List<ServiceRegistration<PodDevice>> registrations = new ArrayList<>();
    for (int i = 0; i < devices.size(); i++) {
      PodDevices.Device d = devices.get(i);
      Dictionary<String, Object> properties = new Hashtable<>();
      properties.put(PodDevice.CONTAINER_LOCATION, location);
      properties.put(PodDevice.INDEX, i);
      properties.put(PodDevice.DRIVER, d.driver());
      properties.put(PodDevice.POOL, d.pool());
      properties.put(PodDevice.DEVICE, d.device());
      properties.put(PodDevice.CLAIM, d.claim());
      properties.put(PodDevice.CLAIM_NAME, d.claimName());
      if (d.request() != null) {
        properties.put(PodDevice.REQUEST, d.request());
      }
      properties.put(PodBundles.POD_NAMESPACE, state.namespace());
      properties.put(PodBundles.POD_NAME, state.name());
      properties.put(PodBundles.POD_UID, state.uid);
      properties.put(PodBundles.CONTAINER_NAME, container);
      registrations.add(context.registerService(PodDevice.class, new Service(d), properties));
    }
    byLocation.put(location, new Published(List.copyOf(devices), registrations));
  }

  /** Withdraws the services of the container at the location. */
  synchronized void withdraw(String location) {
    Published published = byLocation.remove(location);
    if (published != null) {
      published.registrations().forEach(DeviceServices::unregister);
    }
  }

  /** @return the locations that have device services (for tests) */
  synchronized java.util.Set<String> locations() {
    return java.util.Set.copyOf(byLocation.keySet());
  }

  /** Withdraws every device service, then the hooks. */
  @Override
  public synchronized void close() {
    List.copyOf(byLocation.keySet()).forEach(this::withdraw);
    hooks.forEach(DeviceServices::unregister);
    hooks.clear();
  }

  private static void unregister(ServiceRegistration<?> registration) {
    try {
      registration.unregister();
    } catch (IllegalStateException e) {
      // the bundle is stopping: gone already
    }
  }

  /** @return whether the bundle may see the service: not a device service, or one of its container's bundles */
  static boolean visible(ServiceReference<?> reference, Bundle bundle, long registrant) {
    Object location = reference.getProperty(PodDevice.CONTAINER_LOCATION);
    if (!(location instanceof String container) || bundle == null) {
      return true;
    }
    String own = bundle.getLocation();
    return bundle.getBundleId() == registrant || own.equals(container) || own.startsWith(container + "/");
  }

  /** The find and event listener hooks that hide each container's device services from other bundles. */
  private static final class Hooks implements FindHook, EventListenerHook {
    private final long registrant;

    Hooks(long registrant) {
      this.registrant = registrant;
    }

    @Override
    public void find(BundleContext context, String name, String filter, boolean allServices,
        Collection<ServiceReference<?>> references) {
      Bundle bundle = context.getBundle();
      references.removeIf(reference -> !visible(reference, bundle, registrant));
    }

    @Override
    public void event(ServiceEvent event, Map<BundleContext, Collection<ListenerInfo>> listeners) {
      if (event.getServiceReference().getProperty(PodDevice.CONTAINER_LOCATION) == null) {
        return;
      }
      listeners.keySet().removeIf(context -> !visible(event.getServiceReference(), context.getBundle(),
          registrant));
    }
  }

  /** A device as the service its container's bundles get. */
  private static final class Service implements PodDevice {
    private final PodDevices.Device device;

    Service(PodDevices.Device device) {
      this.device = device;
    }

    @Override
    public String claim() {
      return device.claim();
    }

    @Override
    public String claimName() {
      return device.claimName();
    }

    @Override
    public Optional<String> request() {
      return Optional.ofNullable(device.request());
    }

    @Override
    public String driver() {
      return device.driver();
    }

    @Override
    public String pool() {
      return device.pool();
    }

    @Override
    public String device() {
      return device.device();
    }

    @Override
    public List<String> cdiDeviceIds() {
      return java.util.Collections.unmodifiableList(device.cdiDeviceIds());
    }

    @Override
    public Map<String, Object> attributes() {
      return java.util.Collections.unmodifiableMap(device.attributes());
    }

    @Override
    public String toString() {
      return "PodDevice[" + device.id() + " of claim " + device.claim() + "]";
    }
  }
}
