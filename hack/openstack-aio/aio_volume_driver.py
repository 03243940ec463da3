"""Cinder's fake volume driver, made whole enough for the operator's tests.

cinder.tests.fake_driver.FakeLoggingVolumeDriver logs its calls and stores nothing, but it is an LVM
driver underneath, which leaves two gaps on a host without LVM:
  * a volume made from an image is written to the LVM device /dev/mapper/<vg>-<volume>; here it is
    a plain file under $state_path/aio-volumes instead (a copy of the image, never the volume size);
  * extending a volume calls a method its fake volume group lacks; here extending is a no-op, so
    Cinder records the new size.
Loaded by cinder-volume with PYTHONPATH set to this directory (start.sh); configure.sh names it as
the [fake] backend's volume_driver.
"""
import os

from oslo_config import cfg

from cinder.tests import fake_driver


class AIOVolumeDriver(fake_driver.FakeLoggingVolumeDriver):

    def _dir(self):
        d = os.path.join(cfg.CONF.state_path, "aio-volumes")
        os.makedirs(d, exist_ok=True)
        return d

    def local_path(self, volume, vg=None):
        return os.path.join(self._dir(), volume["name"])

    def extend_volume(self, volume, new_size):
        pass

    def delete_volume(self, volume):
        try:
            os.remove(self.local_path(volume))
        except FileNotFoundError:
            pass
