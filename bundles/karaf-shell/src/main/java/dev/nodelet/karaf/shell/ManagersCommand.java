package dev.nodelet.karaf.shell;

import dev.nodelet.objectcache.ObjectManager;
import java.util.List;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.lifecycle.Reference;

/** A command on the object managers (ConfigMaps, Secrets); Karaf injects the fields of superclasses too. */
abstract class ManagersCommand implements Action {

  @Reference
  List<ObjectManager<?>> managers;
}
