import FCMEmulator
print("placeholder")
